/**
 * openStore given a client the app already has (better-sqlite3 Database, PGlite, postgres.js Sql): each kind
 * opens, migrates, writes, searches and closes without closing the client, which still answers afterwards.
 * Also: options that cannot reach such a client are refused, and a postgres.js client whose session settings
 * differ from the store's is refused naming each setting.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { pg_trgm } from '@electric-sql/pglite/contrib/pg_trgm';
import Database from 'better-sqlite3';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ConnectionError,
  type SessionStore,
  ValidationError,
  openStore,
  postgresSessionSettings,
} from '../src/index.js';
import { sql } from 'drizzle-orm';
import type { PgBackend } from '../src/db/pg/backend.js';
import { rowsOf } from '../src/db/pg/open.js';
import { LOCK_FILE } from '../src/db/pg/pglite-lock.js';
import { type Harness, postgresHarness, reportAvailability } from './backends.js';

const dirs: string[] = [];
const tmpDir = () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hsdb-clients-'));
  dirs.push(dir);
  return dir;
};
afterAll(() => {
  for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
});

/** Write two sessions, search them, delete one (on a SQLite file: through the maintenance worker). */
async function exercise(store: SessionStore): Promise<void> {
  await store.createSession('s-1', 'cli');
  await store.createSession('s-2', 'cli');
  await store.appendMessage('s-1', 'user', 'deploy the ingress controller');
  await store.appendMessage('s-2', 'user', '记忆断裂 部署');
  expect((await store.searchMessages('ingress')).map((h) => h.sessionId)).toEqual(['s-1']);
  expect((await store.searchMessages('断裂')).map((h) => h.sessionId)).toEqual(['s-2']);
  expect(await store.deleteSession('s-2')).toBe(true);
  expect((await store.getSession('s-1'))?.messageCount).toBe(1);
}

describe('a better-sqlite3 Database', () => {
  it('opens a file database, sets the store pragmas, and leaves the connection open after close', async () => {
    const file = path.join(tmpDir(), 'app.db');
    const db = new Database(file);
    db.pragma('busy_timeout = 2500');
    db.exec('CREATE TABLE app_notes (id INTEGER PRIMARY KEY, body TEXT)');
    const store = await openStore(db);
    expect(store.dialect).toBe('sqlite');
    expect(store.url).toBe(`sqlite client (${file})`);
    expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
    expect(db.pragma('foreign_keys', { simple: true })).toBe(1);
    expect(db.pragma('synchronous', { simple: true })).toBe(2); // FULL
    await exercise(store);
    await store.close();
    expect(db.open).toBe(true);
    expect(db.pragma('busy_timeout', { simple: true })).toBe(2500); // the app's own lock wait is back
    expect(db.prepare('SELECT count(*) AS n FROM messages').get()).toEqual({ n: 1 });
    db.prepare('INSERT INTO app_notes (body) VALUES (?)').run('still mine');
    db.close();
    // The file is a complete store: reopened by URL it has the session written through the app's connection.
    const reopened = await openStore(`sqlite:${file}`);
    expect((await reopened.getSession('s-1'))?.messageCount).toBe(1);
    await reopened.close();
  });

  it('opens an in-memory database (no maintenance worker: its own connection could not see it)', async () => {
    const db = new Database(':memory:');
    const store = await openStore(db);
    await exercise(store);
    await store.close();
    expect(db.open).toBe(true);
    expect(db.prepare('SELECT count(*) AS n FROM sessions').get()).toEqual({ n: 1 });
    db.close();
  });

  it('respects a read-only Database: reads, writes nothing, and refuses readonly:true for a writable one', async () => {
    const file = path.join(tmpDir(), 'ro.db');
    const writer = await openStore(`sqlite:${file}`);
    await writer.createSession('s-1', 'cli');
    await writer.close();

    const readonlyDb = new Database(file, { readonly: true });
    const store = await openStore(readonlyDb);
    expect((await store.getSession('s-1'))?.source).toBe('cli');
    await expect(store.createSession('s-2', 'cli')).rejects.toThrow(/readonly/i);
    await store.close();
    expect(readonlyDb.open).toBe(true);
    readonlyDb.close();

    const writable = new Database(file);
    await expect(openStore(writable, { readonly: true })).rejects.toMatchObject({
      constructor: ValidationError,
      field: 'options.readonly',
    });
    writable.close();
  });

  it('refuses a Database that returns integers as BigInt, leaving it as it was', async () => {
    const db = new Database(':memory:');
    db.defaultSafeIntegers(true);
    await expect(openStore(db)).rejects.toMatchObject({ constructor: ValidationError, field: 'target' });
    expect(db.prepare(`SELECT count(*) AS n FROM sqlite_master WHERE name = 'sessions'`).get()).toEqual({ n: 0n });
    db.close();
  });

  it('refuses a closed Database', async () => {
    const db = new Database(':memory:');
    db.close();
    await expect(openStore(db)).rejects.toBeInstanceOf(ConnectionError);
  });
});

describe('a PGlite instance', () => {
  it('opens an instance made with pg_trgm, takes no data-directory lock, and leaves it open after close', async () => {
    const dataDir = path.join(tmpDir(), 'pgdata');
    const pg = new PGlite(dataDir, { extensions: { pg_trgm } });
    await pg.exec('CREATE TABLE app_notes (id serial PRIMARY KEY, body text)');
    const store = await openStore(pg);
    expect(store.dialect).toBe('pg');
    expect(store.url).toBe(`pglite client (${dataDir})`);
    expect(fs.existsSync(path.join(dataDir, LOCK_FILE))).toBe(false);
    await exercise(store);
    await store.close();
    expect(pg.closed).toBe(false);
    expect((await pg.query<{ n: number }>('SELECT count(*)::int AS n FROM messages')).rows).toEqual([{ n: 1 }]);
    await pg.query('INSERT INTO app_notes (body) VALUES ($1)', ['still mine']);
    // A second store on the same instance: nothing left behind by the first.
    const again = await openStore(pg);
    expect((await again.getSession('s-1'))?.messageCount).toBe(1);
    await again.close();
    await pg.close();
  });

  it('refuses an instance without pg_trgm, saying how to construct one', async () => {
    const pg = new PGlite();
    const error = await openStore(pg).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConnectionError);
    expect((error as Error).message).toContain('extensions: { pg_trgm }');
    // Nothing was created in the app's database.
    expect((await pg.query(`SELECT count(*)::int AS n FROM pg_class WHERE relname = 'sessions'`)).rows).toEqual([
      { n: 0 },
    ]);
    await pg.close();
  });
});

describe('targets and options', () => {
  it.each([
    ['an object', {}],
    ['a number', 42],
    ['null', null],
    ['a URL object', new URL('postgres://alice:s3cr3t@localhost/app')],
  ])('refuses %s as the target with ValidationError', async (_label, target) => {
    const error = await openStore(target as never).catch((e: unknown) => e);
    expect(error).toMatchObject({ constructor: ValidationError, field: 'target' });
    expect((error as Error).message).not.toContain('s3cr3t');
  });

  it('validates ssl and statementTimeoutMs', async () => {
    await expect(openStore('postgres://h/db', { ssl: 'sometimes' as never })).rejects.toMatchObject({
      field: 'options.ssl',
    });
    await expect(openStore('postgres://h/db', { ssl: 42 as never })).rejects.toMatchObject({ field: 'options.ssl' });
    await expect(openStore('postgres://h/db', { statementTimeoutMs: -1 })).rejects.toMatchObject({
      field: 'options.statementTimeoutMs',
    });
    await expect(openStore('postgres://h/db', { statementTimeoutMs: 1.5 })).rejects.toMatchObject({
      field: 'options.statementTimeoutMs',
    });
  });

  it('refuses ssl and statementTimeoutMs where they cannot apply, saying why', async () => {
    await expect(openStore(':memory:', { ssl: 'require' })).rejects.toThrow(/postgres:\/\/ URLs only, not to sqlite/);
    await expect(openStore('pglite:memory', { statementTimeoutMs: 1000 })).rejects.toThrow(
      /postgres:\/\/ URLs only, not to pglite/,
    );
    const db = new Database(':memory:');
    await expect(openStore(db, { statementTimeoutMs: 1000 })).rejects.toMatchObject({
      field: 'options.statementTimeoutMs',
    });
    db.close();
    // Refused before anything is sent: the client is never connected.
    const client = postgres('postgres://nobody@127.0.0.1:1/none', { connect_timeout: 1 });
    for (const [name, value] of [
      ['ssl', true],
      ['statementTimeoutMs', 5],
      ['poolSize', 3],
      ['connectTimeoutSeconds', 2],
    ] as const) {
      const error = await openStore(client, { [name]: value }).catch((e: unknown) => e);
      expect(error).toMatchObject({ constructor: ValidationError, field: `options.${name}` });
      expect((error as Error).message).toContain('configured by the app');
    }
    await client.end();
  });
});

describe('a postgres.js client (real Postgres)', () => {
  let harness: Harness;
  let available = false;
  beforeAll(async () => {
    harness = await postgresHarness();
    available = reportAvailability(harness);
  });
  afterAll(async () => {
    await harness?.cleanup();
  });

  it('opens a client made with postgresSessionSettings and leaves it usable after close', async (ctx) => {
    if (!available) ctx.skip('no Postgres server (see the warning above)');
    const url = await harness.freshUrl();
    const client = postgres(url, { max: 3, onnotice: () => {}, connection: postgresSessionSettings });
    try {
      const store = await openStore(client);
      expect(store.url).toMatch(/^postgres client \(127\.0\.0\.1:5432\/hsdb_/);
      await exercise(store);
      await store.close();
      expect(await client`SELECT count(*)::int AS n FROM messages`).toEqual([{ n: 1 }]);
    } finally {
      await client.end({ timeout: 5 });
    }
  });

  it('runs its transactions in READ COMMITTED whatever the client defaults to', async (ctx) => {
    if (!available) ctx.skip('no Postgres server (see the warning above)');
    const url = await harness.freshUrl();
    const client = postgres(url, {
      max: 4,
      onnotice: () => {},
      connection: { ...postgresSessionSettings, default_transaction_isolation: 'serializable' },
    });
    try {
      const store = await openStore(client);
      const pg = store.backend as PgBackend;
      const isolation = await pg.transaction(async (tx) =>
        rowsOf<{ level: string }>(await tx.execute(sql`SELECT current_setting('transaction_isolation') AS level`)),
      );
      expect(isolation).toEqual([{ level: 'read committed' }]);
      // The client's own default is untouched outside our transactions.
      expect(await client`SELECT current_setting('transaction_isolation') AS level`).toEqual([
        { level: 'serializable' },
      ]);
      await store.createSession('s-1', 'cli');
      await Promise.all(Array.from({ length: 10 }, (_, i) => store.appendMessage('s-1', 'user', `message ${i}`)));
      expect((await store.getSession('s-1'))?.messageCount).toBe(10);
      await store.close();
    } finally {
      await client.end({ timeout: 5 });
    }
  });

  it('keeps using the app client after one of its connections is lost in our transaction, and never ends it', async (ctx) => {
    if (!available) ctx.skip('no Postgres server (see the warning above)');
    const url = await harness.freshUrl();
    const client = postgres(url, { max: 2, onnotice: () => {}, connection: postgresSessionSettings });
    const admin = postgres(url, { max: 1, onnotice: () => {} });
    try {
      const store = await openStore(client);
      await store.createSession('s-1', 'cli');
      const pg = store.backend as PgBackend;
      // The server drops the connection while our statement runs on it. (Between two statements, the next one
      // is refused before it is sent: test/reliability/pg-connection-lost.test.ts, in a child process.)
      const lost = pg.transaction(async (tx) => {
        const [me] = rowsOf<{ pid: number }>(await tx.execute(sql`SELECT pg_backend_pid() AS pid`));
        const terminate = (async () => {
          for (;;) {
            const [row] = await admin`SELECT pg_terminate_backend(pid) AS done FROM pg_stat_activity
              WHERE pid = ${me!.pid} AND state = 'active' AND query LIKE '%pg_sleep%'`;
            if (row?.done) return;
            await new Promise((resolve) => setTimeout(resolve, 20));
          }
        })();
        await Promise.all([tx.execute(sql`SELECT pg_sleep(60)`), terminate]);
      });
      await expect(lost).rejects.toMatchObject({
        code: expect.stringMatching(/^(57P01|CONNECTION_CLOSED|ECONNRESET)$/),
      });
      // The store goes on over the same client (postgres.js reconnects the closed connection by itself).
      for (let i = 0; i < 4; i++) await store.appendMessage('s-1', 'user', `after the loss ${i}`);
      expect((await store.getSession('s-1'))?.messageCount).toBe(4);
      await store.close();
      expect(await client`SELECT count(*)::int AS n FROM messages`).toEqual([{ n: 4 }]);
    } finally {
      await admin.end({ timeout: 5 });
      await client.end({ timeout: 5 });
    }
  });

  it('refuses a client whose DateStyle differs, naming it and the fix, and leaves the client untouched', async (ctx) => {
    if (!available) ctx.skip('no Postgres server (see the warning above)');
    const url = await harness.freshUrl();
    const client = postgres(url, {
      max: 1,
      onnotice: () => {},
      connection: { DateStyle: 'SQL, DMY', extra_float_digits: -3 },
    });
    try {
      const error = await openStore(client).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ConnectionError);
      const message = (error as Error).message;
      expect(message).toContain("DateStyle is 'SQL, DMY'");
      expect(message).toContain("extra_float_digits is '-3'");
      expect(message).not.toContain('standard_conforming_strings is');
      expect(message).toContain('postgresSessionSettings');
      // Refused before Drizzle touched the client: it still parses timestamps as the app expects.
      const [row] = await client`SELECT now() AS at`;
      expect(row?.at).toBeInstanceOf(Date);
      expect(await client`SELECT count(*)::int AS n FROM pg_class WHERE relname = 'sessions'`).toEqual([{ n: 0 }]);
    } finally {
      await client.end({ timeout: 5 });
    }
  });

  it('refuses a client with a column transform (our rows would be renamed)', async (ctx) => {
    if (!available) ctx.skip('no Postgres server (see the warning above)');
    const client = postgres(await harness.freshUrl(), {
      max: 1,
      transform: postgres.camel,
      connection: postgresSessionSettings,
    });
    try {
      await expect(openStore(client)).rejects.toMatchObject({ constructor: ValidationError, field: 'target' });
    } finally {
      await client.end({ timeout: 5 });
    }
  });
});
