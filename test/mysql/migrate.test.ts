/**
 * The MySQL/MariaDB migrator on the real server. DDL commits statement by statement there, so what is proven
 * here is recovery, not rollback: a run that fails in the middle of a migration keeps what it did, says
 * where it stopped, and the next run resumes there, running no statement twice; a statement that took effect
 * just before its process died is accepted once; concurrent migrators queue on a named lock.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import mysql from 'mysql2/promise';
import { afterAll, describe, expect, it } from 'vitest';
import { MigrationError, type MysqlBackend, StoreBusyError, openStore } from '../../src/index.js';
import { readMigrations } from '../../src/db/migrations.js';
import {
  MYSQL_MIGRATIONS_FOLDER,
  MYSQL_STEPS_TABLE,
  migrateMysql,
  mysqlMigrationStatus,
} from '../../src/db/mysql/migrate.js';
import { TestClock } from '../../src/testing/clock.js';
import { mysqlDatabases } from '../helpers/mariadb.js';
import { folderWith, latestWhen } from '../helpers/migration-folders.js';
import { spawnTs, waitForLine } from '../helpers/processes.js';
import { MYSQL_URL, mariadbHarness, probeMysql } from '../backends.js';

const unavailable = await probeMysql();
const shipped = readMigrations(MYSQL_MIGRATIONS_FOLDER);
const where = 'test database';

describe.skipIf(unavailable !== undefined)(
  `MySQL migrator on MariaDB${unavailable ? ` (skipped: ${unavailable})` : ''}`,
  () => {
    const dbs = mysqlDatabases();
    afterAll(() => dbs.cleanup());

    const count = async (c: mysql.Connection, text: string) =>
      Number(((await c.query(text))[0] as Array<{ n: unknown }>)[0]!.n);
    const tables = async (c: mysql.Connection) =>
      ((await c.query('SHOW TABLES'))[0] as Array<Record<string, unknown>>)
        .map((r) => String(Object.values(r)[0]))
        .sort();

    // The one statement that may have run without being recorded (the process died between the two) is run
    // again: for every shipped statement after the first migration, that second run must be accepted.
    it('every shipped statement that ran but was not recorded is accepted when run again, and the run completes', async () => {
      const folders = path.join(os.tmpdir(), `hsdb-mysql-rerun-${process.pid}`);
      try {
        for (const [at, migration] of shipped.entries()) {
          if (at === 0) continue; // the first statement of all creates the bookkeeping tables first
          const before = path.join(folders, migration.tag);
          fs.cpSync(MYSQL_MIGRATIONS_FOLDER, before, { recursive: true });
          const journalFile = path.join(before, 'meta', '_journal.json');
          const journal = JSON.parse(fs.readFileSync(journalFile, 'utf8')) as { entries: unknown[] };
          journal.entries = journal.entries.slice(0, at);
          fs.writeFileSync(journalFile, JSON.stringify(journal));
          for (const step of migration.statements.keys()) {
            const c = await dbs.fresh();
            await migrateMysql(c, { where, migrationsFolder: before });
            for (const [k, statement] of migration.statements.entries()) {
              if (k > step) break;
              await c.query(statement);
              if (k < step)
                await c.query(`INSERT INTO \`${MYSQL_STEPS_TABLE}\` (hash, step) VALUES (?, ?)`, [migration.hash, k]);
            }
            const report = await migrateMysql(c, { where });
            expect(report.applied, `${migration.tag} step ${step}`).toEqual(shipped.slice(at).map((m) => m.tag));
          }
        }
      } finally {
        fs.rmSync(folders, { recursive: true, force: true });
      }
      // A fresh database and two migrator runs per shipped statement: DDL on MariaDB, slow on a loaded machine.
    }, 120_000);

    const threeSteps = (when: number) => ({
      tag: '9000_three_steps',
      when,
      sql: [
        'CREATE TABLE `extra_a` (`id` int NOT NULL)',
        'ALTER TABLE `blocker` ADD `note` text',
        'CREATE INDEX `idx_extra_a` ON `extra_a` (`id`)',
      ].join(';\n--> statement-breakpoint\n'),
    });

    it('a failure in the middle of a migration: keeps what ran, says where it stopped, and the next run resumes there', async () => {
      const c = await dbs.fresh();
      const folder = folderWith('mysql', [threeSteps(latestWhen('mysql') + 1000)]);
      const failed = await migrateMysql(c, { where, migrationsFolder: folder }).catch((e: unknown) => e);
      expect(failed).toBeInstanceOf(MigrationError);
      expect((failed as MigrationError).reason).toBe('STATEMENT_FAILED');
      expect((failed as MigrationError).message).toMatch(
        /9000_three_steps failed at statement 2 of 3.*resume at statement 2/s,
      );
      // The shipped migrations are applied and recorded; of 9000, statement 1 took effect and is recorded.
      expect((await mysqlMigrationStatus(c, folder)).pending).toEqual(['9000_three_steps']);
      expect(await tables(c)).toContain('extra_a');
      expect(await count(c, `SELECT COUNT(*) AS n FROM \`${MYSQL_STEPS_TABLE}\``)).toBe(1);

      // The cause is fixed; the next run resumes at statement 2 (statement 1 again would fail: the table exists).
      await c.query('CREATE TABLE `blocker` (`id` int)');
      expect(await migrateMysql(c, { where, migrationsFolder: folder })).toEqual({
        applied: ['9000_three_steps'],
        alreadyApplied: shipped.length,
        total: shipped.length + 1,
      });
      const [blockerColumns] = await c.query('SHOW COLUMNS FROM `blocker`');
      expect((blockerColumns as Array<{ Field: string }>).map((r) => r.Field)).toEqual(['id', 'note']);
      const [index] = await c.query("SHOW INDEX FROM `extra_a` WHERE Key_name = 'idx_extra_a'");
      expect(index).toHaveLength(1);
      expect(await count(c, `SELECT COUNT(*) AS n FROM \`${MYSQL_STEPS_TABLE}\``)).toBe(0);
      expect(await mysqlMigrationStatus(c, folder)).toMatchObject({ pending: [], unknownHashes: [] });
    });

    it('a statement that took effect just before its process died (not recorded) is accepted once, as done', async () => {
      const c = await dbs.fresh();
      await c.query('CREATE TABLE `blocker` (`id` int)');
      const folder = folderWith('mysql', [threeSteps(latestWhen('mysql') + 1000)]);
      await migrateMysql(c, { where, migrationsFolder: MYSQL_MIGRATIONS_FOLDER });
      // As if a migrator had run 9000's first statement and been killed before recording it.
      await c.query('CREATE TABLE `extra_a` (`id` int NOT NULL)');
      expect((await migrateMysql(c, { where, migrationsFolder: folder })).applied).toEqual(['9000_three_steps']);
      // Only the first statement not recorded may have run: a second "already exists" is still an error.
      const again = folderWith('mysql', [
        threeSteps(latestWhen('mysql') + 1000),
        {
          tag: '9001_two_creates',
          when: latestWhen('mysql') + 2000,
          sql: 'CREATE TABLE `extra_b` (`id` int);\n--> statement-breakpoint\nCREATE TABLE `extra_a` (`id` int)',
        },
      ]);
      const failed = await migrateMysql(c, { where, migrationsFolder: again }).catch((e: unknown) => e);
      expect((failed as MigrationError).reason).toBe('STATEMENT_FAILED');
      expect((failed as MigrationError).message).toMatch(/9001_two_creates failed at statement 2 of 2/);
    });

    it('a migrator killed in the middle of a migration: the next run resumes, running no recorded statement again', async () => {
      const c = await dbs.fresh();
      const [dbRow] = (await c.query('SELECT DATABASE() AS db'))[0] as Array<{ db: string }>;
      const url = new URL(MYSQL_URL);
      url.pathname = `/${dbRow!.db}`;
      const folder = folderWith('mysql', [
        {
          tag: '9000_slow_middle',
          when: latestWhen('mysql') + 1000,
          sql: [
            'CREATE TABLE `extra_a` (`id` int NOT NULL)',
            'DO SLEEP(2)',
            'CREATE INDEX `idx_extra_a` ON `extra_a` (`id`)',
          ].join(';\n--> statement-breakpoint\n'),
        },
      ]);
      const [slow] = readMigrations(folder).filter((m) => m.tag === '9000_slow_middle');
      const worker = spawnTs('./mysql-migrate-worker.ts', [url.toString(), folder]);
      const exited = new Promise((resolve) => worker.once('exit', resolve));
      await waitForLine(worker, (line) => line === 'migrating');
      // Killed once 9000's first statement is recorded, while its second runs.
      for (let waited = 0; ; waited += 20) {
        const [done] = await c
          .query(`SELECT COUNT(*) AS n FROM \`${MYSQL_STEPS_TABLE}\` WHERE hash = ?`, [slow!.hash])
          .catch(() => [[{ n: 0 }]]);
        if (Number((done as Array<{ n: unknown }>)[0]!.n) > 0) break;
        if (waited > 60_000) throw new Error('the worker never reached 9000_slow_middle');
        await new Promise((r) => setTimeout(r, 20));
      }
      worker.kill('SIGKILL');
      await exited;
      expect((await mysqlMigrationStatus(c, folder)).pending).toEqual(['9000_slow_middle']);
      // The server releases the dead migrator's lock when its connection ends (after its SLEEP at the latest).
      expect((await migrateMysql(c, { where, migrationsFolder: folder })).applied).toEqual(['9000_slow_middle']);
      const [index] = await c.query("SHOW INDEX FROM `extra_a` WHERE Key_name = 'idx_extra_a'");
      expect(index).toHaveLength(1);
    }, 120_000);

    it('refuses a database that has a sessions table but no history', async () => {
      const foreign = await dbs.fresh();
      await foreign.query('CREATE TABLE `sessions` (`id` varchar(64) PRIMARY KEY)');
      const refused = await migrateMysql(foreign, { where }).catch((e: unknown) => e);
      expect((refused as MigrationError).reason).toBe('FOREIGN_DATABASE');
      expect(await tables(foreign)).toEqual(['sessions']);
    });

    it('waits for the lock of a migrator that holds it, and gives up with StoreBusyError after lockTimeoutMs', async () => {
      const c = await dbs.fresh();
      const [dbRow] = (await c.query('SELECT DATABASE() AS db, SHA1(DATABASE()) AS h'))[0] as Array<{ h: string }>;
      const holder = await mysql.createConnection({ uri: MYSQL_URL });
      try {
        await holder.query('SELECT GET_LOCK(?, 0)', [`hermes-sessiondb:migrate:${dbRow!.h.slice(0, 32)}`]);
        const started = Date.now();
        const busy = await migrateMysql(c, { where, lockTimeoutMs: 1000 }).catch((e: unknown) => e);
        expect(busy).toBeInstanceOf(StoreBusyError);
        expect(Date.now() - started).toBeGreaterThanOrEqual(900);
        expect(await tables(c)).toEqual([]);
      } finally {
        await holder.end();
      }
      expect((await migrateMysql(c, { where })).applied).toEqual(shipped.map((m) => m.tag));
    });
  },
);

describe.skipIf(unavailable !== undefined)(
  `an upgrade of a MySQL store that holds data${unavailable ? ` (skipped: ${unavailable})` : ''}`,
  () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hsdb-mysql-upgrade-'));
    afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

    /** The shipped folder as it stood before migration `tag`: its journal and files up to the one before. */
    function folderBefore(tag: string): string {
      const folder = path.join(dir, tag);
      fs.cpSync(MYSQL_MIGRATIONS_FOLDER, folder, { recursive: true });
      const journalFile = path.join(folder, 'meta', '_journal.json');
      const journal = JSON.parse(fs.readFileSync(journalFile, 'utf8')) as { entries: Array<{ tag: string }> };
      const at = journal.entries.findIndex((e) => e.tag === tag);
      expect(at).toBeGreaterThan(0);
      for (const e of journal.entries.slice(at)) fs.rmSync(path.join(folder, `${e.tag}.sql`));
      journal.entries = journal.entries.slice(0, at);
      fs.writeFileSync(journalFile, JSON.stringify(journal));
      return folder;
    }

    it('0003 (idx_sessions_started ascending) keeps every row and makes the listing page read the index', async () => {
      const h = await mariadbHarness();
      try {
        const url = await h.freshUrl();
        const old = await openStore(url, { migrationsFolder: folderBefore('0003_sessions_started_ascending') });
        for (let i = 0; i < 300; i++) {
          await old.createSession(`s${String(i).padStart(3, '0')}`, i % 3 ? 'cli' : 'telegram');
          await old.appendMessage(`s${String(i).padStart(3, '0')}`, 'user', `message ${i} 👋`);
        }
        const before = {
          sessions: await old.listSessionsRich({ includeChildren: true, limit: -1 }),
          messages: await old.exportAll(),
        };
        expect((await old.migrationStatus()).applied).not.toContain('0003_sessions_started_ascending');
        await old.close();

        const upgraded = await openStore(url);
        try {
          expect((await upgraded.migrationStatus()).pending).toEqual([]);
          expect(await upgraded.listSessionsRich({ includeChildren: true, limit: -1 })).toEqual(before.sessions);
          expect(await upgraded.exportAll()).toEqual(before.messages);
          const plan = await (upgraded.backend as MysqlBackend).withConnection(async (c) => {
            const [rows] = await c.query(
              'EXPLAIN SELECT s.id FROM sessions s ORDER BY s.started_at DESC, s.id DESC LIMIT 20',
            );
            return rows as Array<{ key: string | null; Extra: string | null }>;
          });
          expect(plan[0]?.key).toBe('idx_sessions_started');
          expect(plan[0]?.Extra ?? '').not.toMatch(/filesort/);
        } finally {
          await upgraded.close();
        }
      } finally {
        await h.cleanup();
      }
    });

    it('0005/0006 (session activity) keep every row, fill session_activity as SQLite keeps its columns, and the activity page reads the index', async () => {
      const h = await mariadbHarness();
      const clock = new TestClock();
      const reference = await openStore(':memory:', { clock: clock.now });
      try {
        const url = await h.freshUrl();
        const old = await openStore(url, { clock: clock.now, migrationsFolder: folderBefore('0005_session_activity') });
        // Compression chains three deep, branches, roots without messages, and a message older than its session.
        for (const store of [old, reference]) {
          clock.set(TestClock.START);
          for (let r = 0; r < 40; r++) {
            const root = `r${String(r).padStart(2, '0')}`;
            clock.set(TestClock.START + r * 100);
            await store.createSession(root, r % 2 ? 'cli' : 'telegram');
            if (r % 5 === 4) continue;
            await store.appendMessage(root, 'user', `hello ${r}`);
            if (r % 3 === 0) {
              clock.set(TestClock.START + r * 100 + 10);
              await store.endSession(root, 'compression');
              clock.set(TestClock.START + r * 100 + 11);
              await store.createSession(`${root}-c1`, 'cli', { parentSessionId: root });
              clock.set(TestClock.START + 5000 - r * 50);
              await store.appendMessage(`${root}-c1`, 'assistant', 'continued');
              if (r % 2 === 0) {
                await store.endSession(`${root}-c1`, 'compression');
                clock.set(TestClock.START + 5001 - r * 50);
                await store.createSession(`${root}-c2`, 'cli', { parentSessionId: `${root}-c1` });
              }
            }
          }
        }
        const before = {
          sessions: await old.listSessionsRich({ includeChildren: true, limit: -1 }),
          messages: await old.exportAll(),
        };
        await old.close();

        const upgraded = await openStore(url, { clock: clock.now });
        try {
          expect((await upgraded.migrationStatus()).pending).toEqual([]);
          expect(await upgraded.listSessionsRich({ includeChildren: true, limit: -1 })).toEqual(before.sessions);
          expect(await upgraded.exportAll()).toEqual(before.messages);
          for (const options of [
            { orderByLastActive: true, limit: -1 },
            { orderByLastActive: true, includeChildren: true, limit: -1 },
            { orderByLastActive: true, source: 'cli', limit: 7, offset: 3 },
          ])
            expect(await upgraded.listSessionsRich(options), JSON.stringify(options)).toEqual(
              await reference.listSessionsRich(options),
            );
          const plan = await (upgraded.backend as MysqlBackend).withConnection(async (c) => {
            const [rows] = await c.query(
              `EXPLAIN SELECT s.id FROM sessions s JOIN session_activity activity_s ON activity_s.session_id = s.id
               ORDER BY activity_s.chain_last_active DESC, activity_s.started_at DESC, activity_s.session_id DESC LIMIT 20`,
            );
            return rows as Array<{ table: string; key: string | null; Extra: string | null }>;
          });
          expect(plan[0]).toMatchObject({ table: 'activity_s', key: 'idx_session_activity_order' });
          expect(plan[0]?.Extra ?? '').not.toMatch(/filesort/);
        } finally {
          await upgraded.close();
        }
      } finally {
        await reference.close();
        await h.cleanup();
      }
    });
  },
);
