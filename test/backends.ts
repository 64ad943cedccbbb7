/**
 * Test harnesses: one per backend, each able to hand out fresh, empty databases. The contract suite runs on
 * every harness; a harness lists the tests it cannot run, each with its reason (Drizzle's skip-list style).
 *
 * Real Postgres: DATABASE_URL (default postgres://root@127.0.0.1:5432/test) is the admin connection; each
 * fresh database is a new `CREATE DATABASE` on that server, dropped afterwards. Under CI=true an
 * unreachable server fails the run; elsewhere the Postgres tests are skipped with the reason printed.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import postgres from 'postgres';
import { type OpenStoreOptions, openStore } from '../src/index.js';
import { type ContractCapability, type ContractHarness, harnessAvailable } from '../src/testing/index.js';

export type HarnessName = 'sqlite-file' | 'sqlite-memory' | 'pglite' | 'postgres' | 'pglite-schema' | 'postgres-schema';

/** Capabilities some tests need; a harness without one names why in `skips`. */
export type Capability = ContractCapability;

/** A contract harness (hermes-sessiondb/testing) that also says which of our dialects it runs. */
export interface Harness extends ContractHarness {
  name: HarnessName;
  dialect: 'sqlite' | 'pg';
  skips: Partial<Record<Capability, string>>;
  /** Postgres: the schema the harness's stores live in (absent: the default layout). */
  schema?: string;
}

/** The MariaDB/MySQL harness (test/helpers/mariadb.ts), for the suites that run every backend. */
export interface MysqlHarness extends ContractHarness {
  name: 'mariadb';
  dialect: 'mysql';
  skips: Partial<Record<Capability, string>>;
}

/** Any harness of ours. */
export type AnyHarness = Harness | MysqlHarness;

export const isCI = process.env.CI === 'true';
export const DATABASE_URL = process.env.DATABASE_URL ?? 'postgres://root@127.0.0.1:5432/test';

const tmpRoot = () => fs.mkdtempSync(path.join(os.tmpdir(), 'hsdb-test-'));

export function sqliteFileHarness(): Harness {
  const dirs: string[] = [];
  let n = 0;
  const freshUrl = async () => {
    if (dirs.length === 0) dirs.push(tmpRoot());
    return `sqlite:${path.join(dirs[0]!, `store-${n++}.db`)}`;
  };
  return {
    name: 'sqlite-file',
    dialect: 'sqlite',
    skips: {},
    freshUrl,
    open: async (options) => openStore(await freshUrl(), options),
    openAt: (url, options) => openStore(url, options),
    cleanup: async () => {
      // The harness stays usable: a later open starts a new directory.
      for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
    },
  };
}

export function sqliteMemoryHarness(): Harness {
  return {
    name: 'sqlite-memory',
    dialect: 'sqlite',
    skips: {
      'multi-process': 'an in-memory database belongs to one connection; no other process can open it',
      reopen: 'an in-memory database disappears when its connection closes',
    },
    freshUrl: async () => 'sqlite::memory:',
    open: (options) => openStore(':memory:', options),
    openAt: (url, options) => openStore(url, options),
    cleanup: async () => {},
  };
}

/** Options every store of a harness opens with: its schema, when it has one. */
const withSchema = (schema: string | undefined, options?: OpenStoreOptions): OpenStoreOptions =>
  schema === undefined ? (options ?? {}) : { schema, ...options };

/** `schema`: every store of the harness lives in that Postgres schema (the `-schema` harnesses). */
export function pgliteHarness(schema?: string): Harness {
  const dirs: string[] = [];
  let n = 0;
  const freshUrl = async () => {
    if (dirs.length === 0) dirs.push(tmpRoot());
    return `pglite:${path.join(dirs[0]!, `pgdata-${n++}`)}`;
  };
  return {
    name: schema === undefined ? 'pglite' : 'pglite-schema',
    dialect: 'pg',
    schema,
    skips: {
      'multi-process': 'PGlite runs inside one process; a second process cannot share its data directory',
    },
    freshUrl,
    // In-memory PGlite is the fast path for tests that do not reopen the database.
    open: (options) => openStore('pglite:memory', withSchema(schema, options)),
    openAt: (url, options) => openStore(url, withSchema(schema, options)),
    cleanup: async () => {
      // The harness stays usable: a later open starts a new directory.
      for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
    },
  };
}

/** Probe the server once; the answer decides whether the postgres harness runs. */
async function probePostgres(): Promise<string | undefined> {
  const admin = postgres(DATABASE_URL, { max: 1, connect_timeout: 5, onnotice: () => {} });
  try {
    await admin`select 1`;
    return undefined;
  } catch (error) {
    return `Postgres at ${DATABASE_URL.replace(/:[^@/]*@/, ':***@')} is unreachable (${(error as Error).message})`;
  } finally {
    await admin.end({ timeout: 1 });
  }
}

export async function postgresHarness(schema?: string): Promise<Harness> {
  const unavailable = await probePostgres();
  const created: string[] = [];
  const prefix = `hsdb_${process.pid}_${Date.now().toString(36)}`;
  let made = 0;
  let admin: postgres.Sql | undefined;
  const freshUrl = async () => {
    admin ??= postgres(DATABASE_URL, { max: 2, onnotice: () => {} });
    const name = `${prefix}_${made++}`;
    await admin.unsafe(`CREATE DATABASE "${name}"`);
    created.push(name);
    const url = new URL(DATABASE_URL);
    url.pathname = `/${name}`;
    return url.toString();
  };
  return {
    name: schema === undefined ? 'postgres' : 'postgres-schema',
    dialect: 'pg',
    schema,
    skips: {},
    unavailable,
    required: isCI,
    freshUrl,
    open: async (options) => openStore(await freshUrl(), withSchema(schema, options)),
    openAt: (url, options) => openStore(url, withSchema(schema, options)),
    cleanup: async () => {
      if (!admin) return;
      // The harness stays usable: a later open connects a new admin client.
      const client = admin;
      admin = undefined;
      for (const name of created.splice(0)) await client.unsafe(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      await client.end({ timeout: 5 });
    },
  };
}

/** Fail loudly under CI when a mandatory backend is missing; elsewhere say why it is skipped. */
export function reportAvailability(h: ContractHarness): boolean {
  return harnessAvailable(h);
}
