/**
 * Contract: the migrator. Idempotent, exactly-once under concurrency, hash-based (an out-of-order migration
 * is applied, not skipped), refuses databases from a newer version, and all-or-nothing on failure. Its
 * history is its own table: an app's drizzle-kit history beside it is neither read nor written, and a
 * database migrated by 0.1.0 (history in Drizzle's shared table) is moved over once.
 */
import { describe, expect, it } from 'vitest';
import { MigrationError, type MigrationReport, type SessionStore, openStore } from '../../src/index.js';
import { readMigrations } from '../../src/db/migrations.js';
import type { Capability, Harness } from '../backends.js';
import {
  HISTORY_TABLE,
  OLD_PG_TABLES_HASH,
  PG_HISTORY_SCHEMA,
  appFolder,
  drizzleMigrate,
  folderHashes,
  historyRows,
  oldVersionFolder,
  pgSchemaExists,
  query,
} from '../helpers/history.js';
import { folderWith, latestWhen, shippedFolder } from '../helpers/migration-folders.js';
import { spawnTs, waitForLine } from '../helpers/processes.js';

export function migrationsContract(h: Harness): void {
  /** `it`, skipped with the reason in its title where the harness lacks `capability`. */
  const itNeeds = (capability: Capability) => {
    const reason = h.skips[capability];
    return (title: string, body: () => Promise<void>) =>
      it.skipIf(reason !== undefined)(`${title}${reason ? ` (skipped: ${reason})` : ''}`, body);
  };

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
          { tag: '9001_further_future', when: after + 2000, sql: 'CREATE TABLE further_future (id integer);' },
        ]);
        const unknown = readMigrations(newer)
          .slice(-2)
          .map((m) => m.hash);
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
        const message = (error as MigrationError).message;
        expect(message).toMatch(/newer version/);
        // Every unknown hash in full, where they are recorded, and what to do.
        for (const hash of unknown) expect(message).toContain(hash);
        expect(message).toContain(HISTORY_TABLE);
        expect(message).toMatch(/Upgrade hermes-sessiondb/);
        // Reading without migrating still works, and says what is unknown.
        const readOnly = await h.openAt(url, { migrate: false });
        try {
          expect((await readOnly.migrationStatus()).unknownHashes).toEqual(unknown);
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
        const merged = await h.openAt(url, {
          migrate: false,
          migrationsFolder: folderWith(h.dialect, [branchB, branchC]),
        });
        try {
          const report = await merged.migrate();
          expect(report.applied).toEqual(['9000_branch_b']);
          expect(Object.keys((await merged.introspect()).tables)).toEqual(
            expect.arrayContaining(['branch_b', 'branch_c']),
          );
        } finally {
          await merged.close();
        }
      },
    );

    itNeeds('transactional-ddl')('rolls back a failing migration completely', async () => {
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
        const workers = Array.from({ length: 4 }, () =>
          spawnTs('./migrate-worker.ts', [url, ...(h.schema ? [h.schema] : [])]),
        );
        await Promise.all(workers.map((w) => waitForLine(w, (l) => l === 'ready')));
        const results = workers.map((w) => waitForLine(w, (l) => l.startsWith('{')));
        for (const w of workers) w.stdin.write('go\n');
        const reports = (await Promise.all(results)).map(
          (line) => JSON.parse(line) as { ok: boolean; report: MigrationReport },
        );
        expect(reports.map((r) => (r.ok ? 'ok' : (r as unknown as { error: string }).error))).toEqual([
          'ok',
          'ok',
          'ok',
          'ok',
        ]);
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

    describe('migration history', () => {
      const shipped = folderHashes(shippedFolder(h.dialect));
      const total = shipped.length;
      const legacyTable = h.dialect === 'pg' ? '"drizzle"."__drizzle_migrations"' : '"__drizzle_migrations"';
      // drizzle-kit's `migrations` config for our table (SQLite has no schemas: drizzle-orm ignores it there).
      const ourTableConfig = { migrationsTable: HISTORY_TABLE, migrationsSchema: PG_HISTORY_SCHEMA };
      const APP_WHEN = 1_600_000_000_000; // long before our first migration
      const reopenSkip = h.skips.reopen;

      /** Open without migrating, run `body`, close; then (where the backend can) reopen with migrations on and check. */
      async function withDatabase(
        body: (store: SessionStore) => Promise<void>,
        reopened?: (store: SessionStore) => Promise<void>,
      ) {
        const url = await h.freshUrl();
        const store = await openStore(url, { migrate: false });
        try {
          await body(store);
        } finally {
          await store.close();
        }
        if (reopenSkip !== undefined || !reopened) return;
        const again = await openStore(url);
        try {
          await reopened(again);
        } finally {
          await again.close();
        }
      }

      const tables = async (store: SessionStore) => Object.keys((await store.introspect()).tables);

      it('keeps its history in its own table, with the hashes and times drizzle-kit would record', async () => {
        await withDatabase(async (store) => {
          await store.migrate();
          expect(await historyRows(store, 'ours')).toEqual(shipped);
          expect(await historyRows(store, 'legacy')).toBeNull();
          if (h.dialect === 'pg') expect(await pgSchemaExists(store, 'drizzle')).toBe(false);
          expect(await tables(store)).not.toContain(HISTORY_TABLE);
        });
      });

      itNeeds('legacy-history')(
        "moves the history of a database migrated by version 0.1.0 once, keeping its data and other apps' rows",
        async () => {
          const appRow = { hash: 'a'.repeat(64), createdAt: APP_WHEN };
          let ours: unknown;
          await withDatabase(
            async (store) => {
              // What 0.1.0 did (and drizzle-kit migrate with our folder): our rows in Drizzle's shared table.
              await drizzleMigrate(store, { migrationsFolder: oldVersionFolder(h.dialect) });
              await query(store, `INSERT INTO ${legacyTable} ("hash", "created_at") VALUES (?, ?)`, [
                appRow.hash,
                appRow.createdAt,
              ]);
              const legacyBefore = await historyRows(store, 'legacy');
              expect(legacyBefore).toHaveLength(total + 1);
              // On Postgres 0.1.0's 0001 had another text: its superseded hash is what the database records.
              if (h.dialect === 'pg') expect(legacyBefore!.map((r) => r.hash)).toContain(OLD_PG_TABLES_HASH);
              await store.createSession('s1', 'cli');
              await store.appendMessage('s1', 'user', 'a message from before the move');
              expect(await historyRows(store, 'ours')).toBeNull();
              // Read-only status already counts the legacy rows as applied, and the app's row as nobody's business.
              expect(await store.migrationStatus()).toEqual({
                applied: expect.any(Array),
                pending: [],
                unknownHashes: [],
              });

              expect(await store.migrate()).toEqual({ applied: [], alreadyApplied: total, total });
              ours = await historyRows(store, 'ours');
              expect(ours).toEqual(shipped);
              expect(await historyRows(store, 'legacy')).toEqual([appRow]);
              expect(await store.sessionCount()).toBe(1);
              expect((await store.getMessages('s1')).map((m) => m.content)).toEqual(['a message from before the move']);
              expect((await store.searchMessages('before')).map((hit) => hit.sessionId)).toEqual(['s1']);

              // Once: the second run changes nothing.
              expect(await store.migrate()).toEqual({ applied: [], alreadyApplied: total, total });
              expect(await historyRows(store, 'ours')).toEqual(ours);
              expect(await historyRows(store, 'legacy')).toEqual([appRow]);
            },
            async (store) => {
              expect((await store.migrationStatus()).pending).toEqual([]);
              expect(await historyRows(store, 'ours')).toEqual(ours);
              expect(await historyRows(store, 'legacy')).toEqual([appRow]);
              expect(await store.messageCount()).toBe(1);
            },
          );
        },
      );

      itNeeds('legacy-history')(
        "drops Drizzle's table (and on Postgres its schema) when only our rows were in it",
        async () => {
          await withDatabase(async (store) => {
            await drizzleMigrate(store, { migrationsFolder: oldVersionFolder(h.dialect) });
            await store.migrate();
            expect(await historyRows(store, 'ours')).toEqual(shipped);
            expect(await historyRows(store, 'legacy')).toBeNull();
            if (h.dialect === 'pg') expect(await pgSchemaExists(store, 'drizzle')).toBe(false);
          });
        },
      );

      itNeeds('legacy-history')('moves nothing when the run fails: the legacy history stays where it was', async () => {
        const broken = folderWith(h.dialect, [{ tag: '9000_broken', when: after + 1000, sql: 'THIS IS NOT SQL;' }]);
        const url = await h.freshUrl();
        const store = await openStore(url, { migrate: false, migrationsFolder: broken });
        try {
          await drizzleMigrate(store, { migrationsFolder: oldVersionFolder(h.dialect) });
          const legacyBefore = await historyRows(store, 'legacy');
          const error = await store.migrate().catch((e: unknown) => e);
          expect((error as MigrationError).reason).toBe('STATEMENT_FAILED');
          expect(await historyRows(store, 'ours')).toBeNull();
          expect(await historyRows(store, 'legacy')).toEqual(legacyBefore);
        } finally {
          await store.close();
        }
      });

      it('opens a database whose app migrated first with drizzle-kit (its history is not ours to judge)', async () => {
        const app = appFolder(h.dialect, APP_WHEN);
        let appHistory: unknown;
        await withDatabase(
          async (store) => {
            await drizzleMigrate(store, { migrationsFolder: app });
            appHistory = await historyRows(store, 'legacy');
            expect(appHistory).toEqual(folderHashes(app));
            const report = await store.migrate();
            expect(report.applied).toHaveLength(total);
            expect(await tables(store)).toEqual(expect.arrayContaining(['app_users', 'sessions', 'messages']));
            expect(await historyRows(store, 'ours')).toEqual(shipped);
            expect(await historyRows(store, 'legacy')).toEqual(appHistory);
          },
          async (store) => {
            expect(await tables(store)).toEqual(expect.arrayContaining(['app_users', 'sessions', 'messages']));
            expect(await historyRows(store, 'legacy')).toEqual(appHistory);
          },
        );
      });

      it('lets an app migrate after us: drizzle-kit applies its migrations even when they are dated before ours', async () => {
        const app = appFolder(h.dialect, APP_WHEN);
        await withDatabase(async (store) => {
          await store.migrate();
          await drizzleMigrate(store, { migrationsFolder: app });
          expect(await tables(store)).toEqual(expect.arrayContaining(['app_users', 'sessions', 'messages']));
          expect(await historyRows(store, 'legacy')).toEqual(folderHashes(app));
          expect(await historyRows(store, 'ours')).toEqual(shipped);
          expect(await store.migrate()).toEqual({ applied: [], alreadyApplied: total, total });
        });
      });

      it('agrees with drizzle-kit pointed at our folder and our history table, both ways', async () => {
        const migrationsFolder = shippedFolder(h.dialect);
        await withDatabase(async (store) => {
          await drizzleMigrate(store, { migrationsFolder, ...ourTableConfig });
          expect(await historyRows(store, 'ours')).toEqual(shipped);
          expect(await store.migrate()).toEqual({ applied: [], alreadyApplied: total, total });
        });
        await withDatabase(async (store) => {
          await store.migrate();
          await drizzleMigrate(store, { migrationsFolder, ...ourTableConfig });
          expect(await historyRows(store, 'ours')).toEqual(shipped);
          expect(await historyRows(store, 'legacy')).toBeNull();
        });
      });
    });
  });
}
