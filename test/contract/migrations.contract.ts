/**
 * Contract: the migrator. Idempotent, exactly-once under concurrency, hash-based (an out-of-order migration
 * is applied, not skipped), refuses databases from a newer version, and all-or-nothing on failure.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { MigrationError, type MigrationReport } from '../../src/index.js';
import type { Harness } from '../backends.js';
import { folderWith, latestWhen } from '../helpers/migration-folders.js';
import { spawnTs, waitForLine } from '../helpers/processes.js';

export function migrationsContract(h: Harness): void {
  describe('migrator', () => {
    const after = latestWhen(h.dialect);

    it('is a no-op the second time', async () => {
      const store = await h.open({ migrate: false });
      try {
        const first = await store.migrate();
        expect(first.applied.length).toBe(first.total);
        expect(first.alreadyApplied).toBe(0);
        const before = await store.introspect();
        const second = await store.migrate();
        expect(second).toEqual({ applied: [], alreadyApplied: first.total, total: first.total });
        expect(await store.introspect()).toEqual(before);
      } finally {
        await store.close();
      }
    });

    const reopenSkip = h.skips.reopen;
    const unlessReopen = (title: string) => `${title}${reopenSkip ? ` (skipped: ${reopenSkip})` : ''}`;

    it.skipIf(reopenSkip !== undefined)(
      unlessReopen('refuses a database that has a migration this version does not ship'),
      async () => {
        const url = await h.freshUrl();
        const newer = folderWith(h.dialect, [
          { tag: '9000_from_the_future', when: after + 1000, sql: 'CREATE TABLE from_the_future (id integer);' },
        ]);
        await (await h.openAt(url, { migrationsFolder: newer })).close();
        const error = await h.openAt(url).then(
          async (s) => {
            await s.close();
            return undefined;
          },
          (e: unknown) => e,
        );
        expect(error).toBeInstanceOf(MigrationError);
        expect((error as MigrationError).reason).toBe('UNKNOWN_MIGRATIONS');
        expect((error as MigrationError).message).toMatch(/newer version/);
        // Reading without migrating still works, and says what is unknown.
        const readOnly = await h.openAt(url, { migrate: false });
        try {
          expect((await readOnly.migrationStatus()).unknownHashes).toHaveLength(1);
        } finally {
          await readOnly.close();
        }
      },
    );

    it.skipIf(reopenSkip !== undefined)(
      unlessReopen('applies a migration that arrives out of order, which a high-water-mark migrator would skip'),
      async () => {
        const url = await h.freshUrl();
        const branchB = { tag: '9000_branch_b', when: after + 1000, sql: 'CREATE TABLE branch_b (id integer);' };
        const branchC = { tag: '9001_branch_c', when: after + 2000, sql: 'CREATE TABLE branch_c (id integer);' };
        // The database first meets C; then the merged code ships B, whose timestamp is older than C's.
        await (await h.openAt(url, { migrationsFolder: folderWith(h.dialect, [branchC]) })).close();
        const merged = await h.openAt(url, { migrate: false, migrationsFolder: folderWith(h.dialect, [branchB, branchC]) });
        try {
          const report = await merged.migrate();
          expect(report.applied).toEqual(['9000_branch_b']);
          expect(Object.keys((await merged.introspect()).tables)).toEqual(expect.arrayContaining(['branch_b', 'branch_c']));
        } finally {
          await merged.close();
        }
      },
    );

    it('rolls back a failing migration completely', async () => {
      const broken = folderWith(h.dialect, [
        {
          tag: '9000_half_broken',
          when: after + 1000,
          sql: 'CREATE TABLE half_done (id integer);\n--> statement-breakpoint\nTHIS IS NOT SQL;',
        },
      ]);
      const store = await h.open({ migrate: false, migrationsFolder: broken });
      try {
        const error = await store.migrate().catch((e: unknown) => e);
        expect(error).toBeInstanceOf(MigrationError);
        expect((error as MigrationError).reason).toBe('STATEMENT_FAILED');
        expect((error as MigrationError).message).toContain('9000_half_broken');
        const schema = await store.introspect();
        expect(Object.keys(schema.tables)).not.toContain('half_done');
        // The run is one transaction: not even the shipped migrations before it were kept.
        expect(Object.keys(schema.tables)).not.toContain('sessions');
        expect((await store.migrationStatus()).applied).toEqual([]);
      } finally {
        await store.close();
      }
    });

    const multiProcessSkip = h.skips['multi-process'];
    it.skipIf(multiProcessSkip !== undefined)(
      `applies each migration exactly once when four processes migrate at the same moment${multiProcessSkip ? ` (skipped: ${multiProcessSkip})` : ''}`,
      async () => {
        const url = await h.freshUrl();
        const workers = Array.from({ length: 4 }, () => spawnTs('./migrate-worker.ts', [url, ...(h.schema ? [h.schema] : [])]));
        await Promise.all(workers.map((w) => waitForLine(w, (l) => l === 'ready')));
        const results = workers.map((w) => waitForLine(w, (l) => l.startsWith('{')));
        for (const w of workers) w.stdin.write('go\n');
        const reports = (await Promise.all(results)).map((line) => JSON.parse(line) as { ok: boolean; report: MigrationReport });
        expect(reports.map((r) => (r.ok ? 'ok' : (r as unknown as { error: string }).error))).toEqual(['ok', 'ok', 'ok', 'ok']);
        const appliedTags = reports.flatMap((r) => r.report.applied);
        const total = reports[0]!.report.total;
        // Every migration applied by exactly one process.
        expect(appliedTags).toHaveLength(total);
        expect(new Set(appliedTags).size).toBe(total);
        const store = await h.openAt(url, { migrate: false });
        try {
          const status = await store.migrationStatus();
          expect(status.applied).toHaveLength(total);
          expect(status.pending).toEqual([]);
        } finally {
          await store.close();
        }
      },
      60_000,
    );
  });
}
