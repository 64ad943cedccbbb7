/**
 * openStore(url, { mustExist: true }): an existing store opens, and nothing is ever created. On each backend:
 * what counts as missing, the typed error naming it, and the file system or database left as it was.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import postgres from 'postgres';
import { afterAll, describe, expect, it } from 'vitest';
import { ConnectionError, StoreNotFoundError, openStore } from '../src/index.js';
import { postgresHarness, reportAvailability } from './backends.js';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});
const scratch = () => {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), 'hsdb-must-exist-'));
  dirs.push(d);
  return d;
};

async function refusal(
  url: string,
  options: Parameters<typeof openStore>[1] = { mustExist: true },
): Promise<StoreNotFoundError> {
  const error = await openStore(url, options).then(
    async (store) => {
      await store.close();
      return undefined;
    },
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(StoreNotFoundError);
  expect(error).toBeInstanceOf(ConnectionError); // handlers of a failed open still catch it
  expect(error).toMatchObject({ code: 'CONNECTION' });
  return error as StoreNotFoundError;
}

describe('mustExist on SQLite', () => {
  it('refuses a missing file, naming it, and does not create it (nor -wal/-shm files)', async () => {
    const dir = scratch();
    const file = path.join(dir, 'missing.db');
    for (const migrate of [true, false]) {
      const error = await refusal(`sqlite:${file}`, { mustExist: true, migrate });
      expect(error).toMatchObject({ reason: 'MISSING', location: file, url: `sqlite:${file}` });
      expect(error.message).toContain(file);
      expect(fs.readdirSync(dir)).toEqual([]);
    }
  });

  it('readonly implies it: a missing file is the same StoreNotFoundError', async () => {
    const dir = scratch();
    const error = await refusal(`sqlite:${path.join(dir, 'missing.db')}`, { readonly: true });
    expect(error.reason).toBe('MISSING');
    expect(fs.readdirSync(dir)).toEqual([]);
  });

  it('opens an existing store, and with migrate: true migrates an existing file', async () => {
    const file = path.join(scratch(), 'store.db');
    fs.writeFileSync(file, ''); // exists, empty: mustExist is about the file, migrate about its contents
    const store = await openStore(`sqlite:${file}`, { mustExist: true });
    expect((await store.migrationStatus()).pending).toEqual([]);
    await store.createSession('s1', 'cli');
    await store.close();
    const again = await openStore(`sqlite:${file}`, { mustExist: true, migrate: false });
    expect((await again.getSession('s1'))?.source).toBe('cli');
    await again.close();
  });

  it('refuses an in-memory database, which is always new', async () => {
    for (const url of [':memory:', 'sqlite::memory:']) expect((await refusal(url)).reason).toBe('MISSING');
  });

  it('is validated like every option', async () => {
    await expect(openStore(':memory:', { mustExist: 'yes' as never })).rejects.toMatchObject({
      field: 'options.mustExist',
    });
  });
});

describe('mustExist on PGlite', () => {
  it('refuses a missing data directory, naming it, and does not create it', async () => {
    const parent = scratch();
    const dir = path.join(parent, 'pgdata');
    const error = await refusal(`pglite:${dir}`);
    expect(error).toMatchObject({ reason: 'MISSING', location: dir });
    expect(error.message).toContain(dir);
    expect(fs.readdirSync(parent)).toEqual([]);
  });

  it('refuses an empty directory (no database in it) and leaves it empty', async () => {
    const dir = path.join(scratch(), 'pgdata');
    fs.mkdirSync(dir);
    const error = await refusal(`pglite:${dir}`, { mustExist: true, migrate: true });
    expect(error).toMatchObject({ reason: 'NO_STORE', location: dir });
    expect(fs.readdirSync(dir)).toEqual([]);
  });

  it('refuses a file where the directory should be', async () => {
    const file = path.join(scratch(), 'pgdata');
    fs.writeFileSync(file, 'x');
    expect((await refusal(`pglite:${file}`)).reason).toBe('NO_STORE');
  });

  it('opens an existing store', async () => {
    const url = `pglite:${path.join(scratch(), 'pgdata')}`;
    const created = await openStore(url);
    await created.createSession('s1', 'cli');
    await created.close();
    const store = await openStore(url, { mustExist: true, migrate: false });
    expect((await store.getSession('s1'))?.source).toBe('cli');
    await store.close();
  });

  it('refuses pglite:memory, which is always new', async () => {
    expect((await refusal('pglite:memory')).reason).toBe('MISSING');
  });
});

const pg = await postgresHarness();
const pgAvailable = reportAvailability(pg);
describe.skipIf(!pgAvailable)(`mustExist on Postgres${pgAvailable ? '' : ` (skipped: ${pg.unavailable})`}`, () => {
  afterAll(() => pg.cleanup());

  async function relationsAndSchemas(url: string): Promise<string[]> {
    const sql = postgres(url, { max: 1, onnotice: () => {} });
    try {
      const rows = await sql<{ name: string }[]>`
        SELECT 'relation ' || n.nspname || '.' || c.relname AS name FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
          WHERE n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname NOT LIKE 'pg_toast%'
        UNION ALL
        SELECT 'schema ' || nspname FROM pg_namespace
          WHERE nspname NOT IN ('pg_catalog', 'information_schema', 'public') AND nspname NOT LIKE 'pg_toast%' AND nspname NOT LIKE 'pg_temp%'
        UNION ALL
        SELECT 'extension ' || extname FROM pg_extension WHERE extname <> 'plpgsql'`;
      return rows.map((r) => r.name);
    } finally {
      await sql.end({ timeout: 5 });
    }
  }

  it('refuses a database without our migration history, naming it without the password, and writes nothing', async () => {
    const url = new URL(await pg.freshUrl());
    url.password = 's3cr3t-pw'; // trust auth: the server does not ask for it
    for (const migrate of [true, false]) {
      const error = await refusal(url.toString(), { mustExist: true, migrate });
      expect(error.reason).toBe('NO_STORE');
      expect(error.message).toContain(`${url.host}${url.pathname}`);
      expect(error.message).not.toContain('s3cr3t-pw');
      expect(error.location).not.toContain('s3cr3t-pw');
    }
    expect(await relationsAndSchemas(url.toString())).toEqual([]);
  });

  it('opens an existing store', async () => {
    const url = await pg.freshUrl();
    const created = await openStore(url);
    await created.createSession('s1', 'cli');
    await created.close();
    const store = await openStore(url, { mustExist: true, migrate: false });
    expect((await store.getSession('s1'))?.source).toBe('cli');
    await store.close();
  });
});
