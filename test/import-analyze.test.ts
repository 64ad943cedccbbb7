/**
 * Fast from the first query after an import: the import ends by analyzing every table it filled, so the
 * planner has statistics for sessions and messages even with autovacuum off (or not yet awake), and the
 * listing's plan reads the started_at index instead of sorting the table.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import mysql from 'mysql2/promise';
import postgres from 'postgres';
import { afterAll, describe, expect, it } from 'vitest';
import { writeHermesHistoryStateDb } from '../examples/hermes-state-db.js';
import { importHermesStateDb, openStore } from '../src/index.js';
import { harnessAvailable } from '../src/testing/index.js';
import { postgresHarness, mariadbHarness } from './backends.js';
import { pgFolderUpTo } from './helpers/migration-folders.js';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hsdb-import-analyze-'));
const file = path.join(dir, 'state.db');
writeHermesHistoryStateDb(file, { messages: 3000, lineage: true });
const pg = await postgresHarness();
const mariadb = await mariadbHarness();
afterAll(async () => {
  await pg.cleanup();
  await mariadb.cleanup();
  fs.rmSync(dir, { recursive: true, force: true });
});

describe.skipIf(!harnessAvailable(pg))(
  `statistics right after an import into Postgres${pg.unavailable ? ` (skipped: ${pg.unavailable})` : ''}`,
  () => {
    it('has sessions and messages analyzed, and the listing plan reads idx_sessions_started', async () => {
      const url = await pg.freshUrl();
      const statements: Array<{ query: string; params: unknown[] }> = [];
      let capture = false;
      const client = postgres(url, {
        max: 2,
        onnotice: () => {},
        debug: (_connection, query, params) => {
          if (capture) statements.push({ query, params: params as unknown[] });
        },
      });
      const store = await openStore(client);
      try {
        const report = await importHermesStateDb(file, store);
        expect(report.messages).toBeGreaterThanOrEqual(3000);
        const tables = await client<Array<{ relname: string; reltuples: number; analyzed: boolean }>>`
        SELECT c.relname, c.reltuples::float8 AS reltuples, s.last_analyze IS NOT NULL AS analyzed
        FROM pg_class c JOIN pg_stat_user_tables s ON s.relid = c.oid
        WHERE c.relname IN ('sessions', 'messages') ORDER BY c.relname`;
        expect(tables.map((t) => ({ table: t.relname, analyzed: t.analyzed }))).toEqual([
          { table: 'messages', analyzed: true },
          { table: 'sessions', analyzed: true },
        ]);
        expect(tables.find((t) => t.relname === 'messages')!.reltuples).toBeGreaterThan(2000);
        const [columnStats] = await client<[{ n: number }]>`
        SELECT COUNT(*)::int AS n FROM pg_stats WHERE tablename = 'sessions' AND attname = 'started_at'`;
        expect(columnStats.n).toBe(1);

        capture = true;
        await store.listSessionsRich({ limit: 50 });
        capture = false;
        const listing = statements.find((s) => /ORDER BY/i.test(s.query) && /LIMIT/i.test(s.query));
        expect(listing).toBeDefined();
        const plan = await client.unsafe(`EXPLAIN ${listing!.query}`, listing!.params as never[]);
        const text = plan.map((r) => String(Object.values(r)[0])).join('\n');
        expect(text).toContain('idx_sessions_started');
      } finally {
        await store.close();
        await client.end({ timeout: 5 });
      }
    });
  },
);

describe.skipIf(!harnessAvailable(pg))(
  `statistics after a migration's backfill${pg.unavailable ? ` (skipped: ${pg.unavailable})` : ''}`,
  () => {
    it('analyzes a store that had rows when migrations were applied to it', async () => {
      const url = await pg.freshUrl();
      // Before 0008, which backfills every session's activity columns.
      const old = await openStore(url, { migrationsFolder: pgFolderUpTo('0007_pin_trigger_search_path') });
      await old.createSession('s1', 'cli');
      await old.appendMessage('s1', 'user', 'hello');
      await old.close();
      const store = await openStore(url);
      const client = postgres(url, { max: 1, onnotice: () => {} });
      try {
        const analyzed = await client<Array<{ relname: string }>>`
        SELECT relname FROM pg_stat_user_tables
        WHERE relname IN ('sessions', 'messages') AND last_analyze IS NOT NULL ORDER BY relname`;
        expect(analyzed.map((r) => r.relname)).toEqual(['messages', 'sessions']);
      } finally {
        await client.end({ timeout: 5 });
        await store.close();
      }
    });
  },
);

describe.skipIf(!harnessAvailable(mariadb))(
  `statistics right after an import into MariaDB${mariadb.unavailable ? ` (skipped: ${mariadb.unavailable})` : ''}`,
  () => {
    it('has InnoDB statistics counting the imported sessions and messages', async () => {
      const url = await mariadb.freshUrl();
      const store = await openStore(url);
      const c = await mysql.createConnection({ uri: url });
      try {
        const report = await importHermesStateDb(file, store);
        const [found] = await c.query(
          `SELECT table_name AS t, n_rows AS n FROM mysql.innodb_table_stats
         WHERE database_name = DATABASE() AND table_name IN ('sessions', 'messages') ORDER BY table_name`,
        );
        const rows = found as Array<{ t: string; n: number }>;
        expect(rows.map((r) => r.t)).toEqual(['messages', 'sessions']);
        // An estimate from sampled pages: the right size, not an empty table's 0.
        expect(Number(rows[0]!.n)).toBeGreaterThan(report.messages / 2);
        expect(Number(rows[1]!.n)).toBeGreaterThan(report.sessions / 2);
      } finally {
        await c.end();
        await store.close();
      }
    });
  },
);
