/**
 * Faults: a Postgres connection killed in the middle of a transaction, a server that is down, SQLite files
 * that cannot be used. Each ends in a typed error that names the place (passwords redacted), nothing
 * half-written, and a store that keeps working where it can; never a crash or a silently empty store.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import mysql from 'mysql2/promise';
import postgres from 'postgres';
import { afterAll, describe, expect, it } from 'vitest';
import { ConnectionError, DatabaseError, MigrationError, SessionDbError, openStore } from '../../src/index.js';
import { harnessAvailable } from '../../src/testing/index.js';
import { postgresHarness, reportAvailability, mariadbHarness } from '../backends.js';
import { PAST_STARTUP_SQL } from '../helpers/postgres-js.js';
import { folderWith, latestWhen } from '../helpers/migration-folders.js';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hsdb-faults-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

const pg = await postgresHarness();
const pgAvailable = reportAvailability(pg);

afterAll(() => pg.cleanup());

describe.skipIf(!pgAvailable)(`Postgres faults${pgAvailable ? '' : ` (skipped: ${pg.unavailable})`}`, () => {
  it('a connection killed mid-transaction is a DatabaseError, rolls back what the call wrote, and the next call works', async () => {
    const url = await pg.freshUrl();
    const store = await openStore(url, { poolSize: 2 });
    const admin = postgres(url, { max: 2, onnotice: () => {} });
    try {
      await store.createSession('s', 'cli');
      await store.appendMessage('s', 'user', 'before');
      let outcome: unknown;
      await admin.begin(async (tx) => {
        // appendMessage bumps sessions.message_count and inserts into messages in one statement: hold it
        // back on the messages lock, then kill its connection while it waits.
        await tx`LOCK TABLE messages IN SHARE MODE`;
        const call = store.appendMessage('s', 'user', 'doomed').then(
          () => 'resolved',
          (error: unknown) => error,
        );
        let victim: number | undefined;
        for (let i = 0; i < 200 && victim === undefined; i++) {
          const waiting = await admin`SELECT pid FROM pg_stat_activity
            WHERE datname = current_database() AND wait_event_type = 'Lock' AND query ILIKE '%insert into "public"."messages"%'`;
          victim = waiting[0]?.pid as number | undefined;
          if (victim === undefined) await new Promise((r) => setTimeout(r, 25));
        }
        expect(victim, 'the append never reached its INSERT').toBeDefined();
        const [{ running }] =
          (await admin`SELECT COUNT(*)::int AS running FROM pg_stat_activity WHERE pid = ${victim!} AND xact_start IS NOT NULL`) as unknown as [
            { running: number },
          ];
        expect(running).toBe(1);
        await admin`SELECT pg_terminate_backend(${victim!})`;
        outcome = await call;
      });
      expect(outcome).toBeInstanceOf(DatabaseError);
      expect((outcome as DatabaseError).code).toBe('DATABASE');
      // Depending on timing: the server's admin_shutdown (57P01), a closed socket, or a reset one.
      expect((outcome as DatabaseError).driverCode).toMatch(/^(57P01|CONNECTION_CLOSED|ECONNRESET)$/);
      const session = (await store.getSession('s'))!;
      expect(session.messageCount).toBe(1);
      expect((await store.getMessages('s')).map((m) => m.content)).toEqual(['before']);
      await store.appendMessage('s', 'user', 'after');
      expect((await store.getMessages('s')).map((m) => m.content)).toEqual(['before', 'after']);
      expect((await store.getSession('s'))!.messageCount).toBe(2);
    } finally {
      await admin.end();
      await store.close();
    }
  });
});

describe.skipIf(!pgAvailable)(
  `Postgres: a statement of openStore refused${pgAvailable ? '' : ` (skipped: ${pg.unavailable})`}`,
  () => {
    it('is a typed DatabaseError naming the cause, not the driver error', async () => {
      const url = await pg.freshUrl();
      const role = `hsdb_no_pg_trigger_${process.pid}`;
      const admin = postgres(url, { max: 1, onnotice: () => {} });
      try {
        // A role that owns the database (so it can migrate) but may not read pg_trigger, which the open reads
        // after migrating to check the search structures (pg_trigger is per database: only this one changes).
        await admin.unsafe(`CREATE ROLE ${role} LOGIN`);
        await admin.unsafe(`ALTER DATABASE "${new URL(url).pathname.slice(1)}" OWNER TO ${role}`);
        await admin.unsafe('REVOKE SELECT ON pg_catalog.pg_trigger FROM PUBLIC');
        const as = new URL(url);
        as.username = role;
        const error = await openStore(as.toString()).catch((e: unknown) => e);
        expect(error).toBeInstanceOf(DatabaseError);
        expect(error).toMatchObject({ code: 'DATABASE', driverCode: '42501' });
        expect((error as Error).message).toMatch(/permission denied for table pg_trigger/);
      } finally {
        await admin.end();
        await pg.cleanup();
        const server = postgres(process.env.DATABASE_URL ?? 'postgres://root@127.0.0.1:5432/test', { max: 1 });
        await server.unsafe(`DROP ROLE IF EXISTS ${role}`).finally(() => server.end());
      }
    });
  },
);

describe.skipIf(!pgAvailable)(
  `Postgres connection killed mid-migration${pgAvailable ? '' : ` (skipped: ${pg.unavailable})`}`,
  () => {
    it('is a typed error, rolls the run back, never crashes the process, and the next migrate works', async () => {
      // postgres.js' begin() writes ROLLBACK to a dead connection and later throws from a timer
      // (porsager/postgres #1154, #1208): listen for anything that escapes.
      const escaped: unknown[] = [];
      const onEscape = (error: unknown) => escaped.push(error);
      process.on('uncaughtException', onEscape);
      process.on('unhandledRejection', onEscape);
      const url = await pg.freshUrl();
      const slow = folderWith('pg', [{ tag: '9000_slow', when: latestWhen('pg') + 1000, sql: 'SELECT pg_sleep(5);' }]);
      const store = await openStore(url, { migrate: false, migrationsFolder: slow, poolSize: 2 });
      const admin = postgres(url, { max: 1, onnotice: () => {} });
      try {
        const call = store.migrate().then(
          () => 'resolved',
          (error: unknown) => error,
        );
        let victim: number | undefined;
        for (let i = 0; i < 200 && victim === undefined; i++) {
          const sleeping = await admin`SELECT pid FROM pg_stat_activity
          WHERE datname = current_database() AND query ILIKE '%pg_sleep(5)%' AND pid <> pg_backend_pid()`;
          victim = sleeping[0]?.pid as number | undefined;
          if (victim === undefined) await new Promise((r) => setTimeout(r, 25));
        }
        expect(victim, 'the migration never reached pg_sleep').toBeDefined();
        await admin`SELECT pg_terminate_backend(${victim!})`;
        const outcome = await call;
        expect(outcome).toBeInstanceOf(MigrationError);
        expect((outcome as MigrationError).reason).toBe('STATEMENT_FAILED');
        // Depending on timing: the server's admin_shutdown, or a closed socket.
        expect((outcome as MigrationError).message).toMatch(/9000_slow.*(terminating connection|CONNECTION_CLOSED)/);
        // The run was one transaction: not even the shipped migrations before the slow one were kept.
        expect((await store.migrationStatus()).applied).toEqual([]);
        const [{ tables }] =
          (await admin`SELECT count(*)::int AS tables FROM pg_tables WHERE schemaname = 'public'`) as unknown as [
            { tables: number },
          ];
        expect(tables).toBe(0);
        // Give a stray timer on a dead connection its chance to fire, while the pool is used again.
        for (let i = 0; i < 5; i++) {
          await store.migrationStatus();
          await new Promise((r) => setTimeout(r, 100));
        }
        const report = await store.migrate();
        expect(report.applied.at(-1)).toBe('9000_slow');
        expect((await store.migrationStatus()).pending).toEqual([]);
        await store.createSession('after', 'cli');
        expect((await store.getSession('after'))?.id).toBe('after');
        expect(escaped).toEqual([]);
      } finally {
        process.off('uncaughtException', onEscape);
        process.off('unhandledRejection', onEscape);
        await admin.end();
        await store.close();
      }
    }, 60_000);
  },
);

describe.skipIf(!pgAvailable)(
  `Postgres idle connections killed${pgAvailable ? '' : ` (skipped: ${pg.unavailable})`}`,
  () => {
    it('keeps answering after every pooled connection was terminated between calls', async () => {
      const url = await pg.freshUrl();
      const store = await openStore(url, { poolSize: 4 });
      const admin = postgres(url, { max: 1, onnotice: () => {} });
      try {
        await store.createSession('s', 'cli');
        await Promise.all(Array.from({ length: 8 }, (_, i) => store.appendMessage('s', 'user', `m${i}`)));
        const killed = await admin`SELECT pg_terminate_backend(pid) FROM pg_stat_activity
        WHERE datname = current_database() AND application_name = 'hermes-sessiondb' AND pid <> pg_backend_pid()
          AND ${admin.unsafe(PAST_STARTUP_SQL)}`;
        expect(killed.length).toBeGreaterThan(0);
        await new Promise((r) => setTimeout(r, 100));
        // A call may meet a connection the server just closed: it fails typed, or succeeds; it never crashes.
        for (let i = 0; i < 6; i++) {
          await store
            .appendMessage('s', 'user', `after ${i}`)
            .catch((error: unknown) => expect(error).toBeInstanceOf(DatabaseError));
          await store.getMessages('s').catch((error: unknown) => expect(error).toBeInstanceOf(DatabaseError));
        }
        await store.appendMessage('s', 'user', 'settled');
        const messages = await store.getMessages('s');
        expect(messages.at(-1)!.content).toBe('settled');
        expect((await store.getSession('s'))!.messageCount).toBe(messages.length);
      } finally {
        await admin.end();
        await store.close();
      }
    });
  },
);

const maria = await mariadbHarness();
const mariaAvailable = harnessAvailable(maria);

describe.skipIf(!mariaAvailable)(`MariaDB faults${mariaAvailable ? '' : ` (skipped: ${maria.unavailable})`}`, () => {
  afterAll(() => maria.cleanup());

  it('a connection killed mid-append is a DatabaseError, rolls back what the call wrote, and the next call works', async () => {
    const url = await maria.freshUrl();
    const store = await openStore(url, { poolSize: 2 });
    const admin = await mysql.createConnection({ uri: url });
    try {
      await store.createSession('s', 'cli');
      await store.appendMessage('s', 'user', 'before');
      // Hold the append back at its INSERT (it has bumped the counters by then), then kill its connection.
      // The tables messages' triggers write (the search queue, session activity) are locked with it.
      await admin.query('LOCK TABLES messages WRITE');
      const call = store.appendMessage('s', 'user', 'doomed').then(
        () => 'resolved',
        (error: unknown) => error,
      );
      let victim: number | undefined;
      for (let i = 0; i < 200 && victim === undefined; i++) {
        const [waiting] = await admin.query(
          "SELECT ID AS id FROM information_schema.PROCESSLIST WHERE DB = DATABASE() AND ID <> CONNECTION_ID() AND STATE LIKE '%lock%'",
        );
        victim = (waiting as Array<{ id: number }>)[0]?.id;
        if (victim === undefined) await new Promise((r) => setTimeout(r, 25));
      }
      expect(victim, 'the append never waited for the lock').toBeDefined();
      await admin.query(`KILL CONNECTION ${Number(victim)}`);
      const outcome = await call;
      await admin.query('UNLOCK TABLES');
      expect(outcome).toBeInstanceOf(DatabaseError);
      expect((outcome as DatabaseError).code).toBe('DATABASE');
      const session = (await store.getSession('s'))!;
      expect(session.messageCount).toBe(1);
      expect((await store.getMessages('s')).map((m) => m.content)).toEqual(['before']);
      // The pool drops the dead connection: every later call works, on either of its two connections.
      for (let i = 0; i < 4; i++) await store.appendMessage('s', 'user', `after ${i}`);
      expect((await store.getMessages('s')).map((m) => m.content)).toEqual([
        'before',
        'after 0',
        'after 1',
        'after 2',
        'after 3',
      ]);
      expect((await store.getSession('s'))!.messageCount).toBe(5);
    } finally {
      await admin.query('UNLOCK TABLES').catch(() => {});
      await admin.end();
      await store.close();
    }
  });
});

describe('a server that is down, or a host that does not exist', () => {
  it('is a ConnectionError naming the host and port, never the password', async () => {
    for (const [url, place] of [
      ['postgres://alice:s3cr3t-pw@127.0.0.1:1/sessions', '127.0.0.1:1'],
      ['postgresql://alice:s3cr3t-pw@no-such-host.invalid:5432/sessions', 'no-such-host.invalid'],
      ['mysql://alice:s3cr3t-pw@127.0.0.1:1/sessions', '127.0.0.1:1'],
      ['mariadb://alice:s3cr3t-pw@no-such-host.invalid:3306/sessions', 'no-such-host.invalid'],
    ] as const) {
      const error = await openStore(url, { connectTimeoutSeconds: 3 }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ConnectionError);
      expect((error as Error).message).toContain(place);
      expect((error as Error).message).toContain('alice:***@');
      expect(JSON.stringify(error, Object.getOwnPropertyNames(error))).not.toContain('s3cr3t-pw');
      expect(String((error as Error).stack)).not.toContain('s3cr3t-pw');
    }
  });
});

describe('SQLite files that cannot be used', () => {
  const expectConnectionError = async (url: string, pattern: RegExp) => {
    const error = await openStore(url).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConnectionError);
    expect((error as Error).message).toMatch(pattern);
  };

  it('a missing directory, a file that is not a database, a truncated database: typed errors, files untouched', async () => {
    await expectConnectionError(
      `sqlite:${path.join(dir, 'no', 'such', 'state.db')}`,
      /directory .*no\/such does not exist/,
    );
    expect(fs.existsSync(path.join(dir, 'no'))).toBe(false);

    const text = path.join(dir, 'notes.db');
    fs.writeFileSync(text, 'these are my notes, not a database\n'.repeat(200));
    const before = fs.readFileSync(text);
    await expectConnectionError(`sqlite:${text}`, /notes\.db: file is not a database/);
    expect(fs.readFileSync(text).equals(before)).toBe(true);

    const good = path.join(dir, 'good.db');
    const store = await openStore(`sqlite:${good}`);
    await store.createSession('a', 'cli');
    for (let i = 0; i < 200; i++) await store.appendMessage('a', 'user', `message ${i} `.repeat(40));
    await store.close();
    const truncated = path.join(dir, 'truncated.db');
    fs.writeFileSync(truncated, fs.readFileSync(good).subarray(0, 16 * 4096));
    await expectConnectionError(`sqlite:${truncated}`, /truncated\.db: database disk image is malformed/);
  });

  it.skipIf(process.getuid?.() === 0 && !canMakeImmutable())(
    `a read-only database file is refused at open${process.getuid?.() === 0 && !canMakeImmutable() ? ' (skipped: running as root, which file modes do not bind, and chattr +i is unavailable here)' : ''}`,
    async () => {
      fs.mkdirSync(path.join(dir, 'locked'));
      const file = path.join(dir, 'locked', 'readonly.db');
      const store = await openStore(`sqlite:${file}`);
      await store.createSession('kept', 'cli');
      await store.close();
      const lock = readOnly(file);
      try {
        const error = await openStore(`sqlite:${file}`).catch((e: unknown) => e);
        expect(error).toBeInstanceOf(SessionDbError);
        expect((error as SessionDbError).code).toBe('CONNECTION');
        expect((error as Error).message).toContain('readonly.db');
      } finally {
        lock.undo();
      }
    },
  );

  it('creates the database, its -wal and its -shm readable by the owner only (0600)', async () => {
    const file = path.join(dir, 'private.db');
    const store = await openStore(`sqlite:${file}`);
    try {
      await store.createSession('a', 'cli');
      await store.appendMessage('a', 'user', 'secret conversation');
      for (const f of [file, `${file}-wal`, `${file}-shm`]) {
        expect(fs.existsSync(f), f).toBe(true);
        expect((fs.statSync(f).mode & 0o777).toString(8), f).toBe('600');
      }
    } finally {
      await store.close();
    }
  });
});

/** Root ignores file modes; the immutable attribute binds root too, where the filesystem supports it. */
function canMakeImmutable(): boolean {
  const probe = path.join(dir, 'chattr-probe');
  fs.writeFileSync(probe, '');
  try {
    execFileSync('chattr', ['+i', probe], { stdio: 'ignore' });
    execFileSync('chattr', ['-i', probe], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  } finally {
    fs.rmSync(probe, { force: true });
  }
}

function readOnly(file: string): { undo(): void } {
  if (process.getuid?.() === 0) {
    execFileSync('chattr', ['+i', file, path.dirname(file)]);
    return { undo: () => execFileSync('chattr', ['-i', file, path.dirname(file)]) };
  }
  fs.chmodSync(file, 0o444);
  fs.chmodSync(path.dirname(file), 0o555);
  return {
    undo: () => {
      fs.chmodSync(path.dirname(file), 0o755);
      fs.chmodSync(file, 0o600);
    },
  };
}
