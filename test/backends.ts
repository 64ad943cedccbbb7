/**
 * Test harnesses: one per backend, each able to hand out fresh, empty databases. The contract suite runs on
 * every harness; a harness lists the tests it cannot run, each with its reason (Drizzle's skip-list style).
 *
 * Real Postgres and MariaDB/MySQL: DATABASE_URL (default postgres://root@127.0.0.1:5432/test) and MYSQL_URL
 * (default mysql://root@127.0.0.1:3306/test) are the admin connections; each fresh database is a new
 * `CREATE DATABASE` on that server, dropped afterwards. Under CI=true an unreachable server fails the run;
 * elsewhere that server's tests are skipped with the reason printed.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Connection as MysqlConnection } from 'mysql2/promise';
import postgres from 'postgres';
import { type OpenStoreOptions, openStore } from '../src/index.js';
import { type ContractCapability, type ContractHarness, harnessAvailable } from '../src/testing/index.js';
import { buildOnce, contentHash } from './helpers/build-once.js';

export type HarnessName =
  | 'sqlite-file'
  | 'sqlite-memory'
  | 'pglite'
  | 'postgres'
  | 'pglite-schema'
  | 'postgres-schema'
  | 'mariadb';

/**
 * Capabilities some tests need; a harness without one names why in `skips`. Beyond the exported contract's:
 * what our migrator contract (test/contract/migrations.contract.ts) needs of a dialect.
 */
export type Capability =
  | ContractCapability
  /** A failed migration run is rolled back whole, DDL included. */
  | 'transactional-ddl'
  /** Version 0.1.0 shipped the dialect, so a store may hold its history in Drizzle's shared table. */
  | 'legacy-history';

/** A contract harness (hermes-sessiondb/testing) that also says which of our dialects it runs. */
export interface Harness extends ContractHarness {
  name: HarnessName;
  dialect: 'sqlite' | 'pg' | 'mysql';
  skips: Partial<Record<Capability, string>>;
  /** Postgres: the schema the harness's stores live in (absent: the default layout). */
  schema?: string;
}

export const isCI = process.env.CI === 'true';
export const DATABASE_URL = process.env.DATABASE_URL ?? 'postgres://root@127.0.0.1:5432/test';
export const MYSQL_URL = process.env.MYSQL_URL ?? 'mysql://root@127.0.0.1:3306/test';

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

/** Options that only change how a store behaves once open, not what opening it migrates or checks. */
const RUNTIME_OPTIONS = new Set(['clock', 'searchRankWindow']);

const pgliteTemplates = new Map<string, Promise<string>>();
/**
 * A PGlite data directory as `openStore(url, options)` leaves a new one, built once per content of the code it
 * depends on (.tmp/pglite/<name>-<hash>); tests copy it instead of paying for it per store.
 */
function pgliteTemplate(name: string, options: OpenStoreOptions): Promise<string> {
  let built = pgliteTemplates.get(name);
  if (!built) {
    const hash = contentHash(['src', 'drizzle', 'node_modules/@electric-sql/pglite/package.json'], name);
    const prefix = `${name}-`;
    built = buildOnce('pglite', `${prefix}${hash}`, async (partial) => {
      await (await openStore(`pglite:${partial}`, options)).close();
      // Copies made before src or drizzle last changed are never read again: 40 MB each. Only those an hour
      // old go: a run that started before an edit to src may still be copying the one it hashed.
      const dir = path.dirname(partial);
      for (const entry of fs.readdirSync(dir)) {
        const full = path.join(dir, entry);
        if (entry.startsWith(prefix) && !entry.startsWith(`${prefix}${hash}`) && !entry.endsWith('.lock'))
          if (Date.now() - (fs.statSync(full, { throwIfNoEntry: false })?.mtimeMs ?? Date.now()) > 3_600_000)
            fs.rmSync(full, { recursive: true, force: true });
      }
    });
    pgliteTemplates.set(name, built);
  }
  return built;
}

/**
 * A migrated directory per schema: `open()` copies it and opens the copy, which checks the migrations as every
 * open does but has none left to apply. A WASM Postgres running every migration costs seconds per store; the
 * migrator itself is tested on `freshUrl()` directories, which start blank (below).
 */
const migratedPglite = (schema: string | undefined) => pgliteTemplate(schema ?? 'default', withSchema(schema, {}));

/** Make `dataDir` a copy of the harness's migrated PGlite directory (`schema`: the harness's schema), for a test about something else than creating or migrating one. */
export async function copyMigratedPglite(dataDir: string, schema?: string): Promise<void> {
  fs.cpSync(await migratedPglite(schema), dataDir, { recursive: true });
}

/**
 * A directory as PGlite leaves a new one once our open has run on it without migrating: PGlite's initdb, no
 * table, no migration (`migrationStatus()` has every migration pending). A harness directory the test opens
 * starts as a copy of it: initdb in a WASM Postgres costs seconds per directory, and what the migrator does
 * from nothing is the same either way. A directory PGlite has not written yet is still opened wherever a test
 * opens a URL itself (CLI, import, copy).
 */
const blankPglite = () => pgliteTemplate('blank', { migrate: false });

/**
 * Before a harness URL is first opened: its directory starts as the blank template's copy, unless the open is
 * one that must find the directory as it is (`mustExist`, `readonly`: a missing directory is refused).
 */
async function startFromBlank(url: string, options: OpenStoreOptions | undefined): Promise<void> {
  const dir = url.startsWith('pglite:') ? url.slice('pglite:'.length) : undefined;
  if (dir === undefined || dir === 'memory' || fs.existsSync(dir)) return;
  if (options?.mustExist || options?.readonly) return;
  fs.cpSync(await blankPglite(), dir, { recursive: true });
}

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
    open: async (options) => {
      // Options that change what opening does (migrate, migrationsFolder, mustExist, …) get an empty database:
      // in memory where it must not be a directory (mustExist refuses memory), else a blank directory.
      if (Object.keys(options ?? {}).some((key) => !RUNTIME_OPTIONS.has(key))) {
        if (options?.mustExist) return openStore('pglite:memory', withSchema(schema, options));
        const url = await freshUrl();
        await startFromBlank(url, options);
        return openStore(url, withSchema(schema, options));
      }
      const url = await freshUrl();
      await copyMigratedPglite(url.slice('pglite:'.length), schema);
      return openStore(url, withSchema(schema, options));
    },
    openAt: async (url, options) => {
      await startFromBlank(url, options);
      return openStore(url, withSchema(schema, options));
    },
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

// Loaded on first use: most files that import the harnesses never touch MySQL.
const loadMysql2 = () => import('mysql2/promise');

/** Why the MariaDB/MySQL server cannot be used here, or undefined when it can. Fatal under CI=true. */
export async function probeMysql(): Promise<string | undefined> {
  const { default: mysql } = await loadMysql2();
  try {
    const c = await mysql.createConnection({ uri: MYSQL_URL, connectTimeout: 5000 });
    await c.end();
    return undefined;
  } catch (error) {
    const reason = `MySQL/MariaDB at ${MYSQL_URL.replace(/:[^@/:]*@/, ':***@')} is unreachable (${(error as Error).message})`;
    if (isCI) throw new Error(`mandatory under CI=true: ${reason}`);
    console.warn(`skipped: ${reason}. Start it (see README) or set MYSQL_URL.`);
    return reason;
  }
}

/** The MariaDB/MySQL server at MYSQL_URL: a fresh database per store. */
export async function mariadbHarness(): Promise<Harness> {
  const unavailable = await probeMysql();
  const prefix = `hsdb_${process.pid}_${Date.now().toString(36)}`;
  const created: string[] = [];
  let made = 0;
  let admin: MysqlConnection | undefined;
  const freshUrl = async () => {
    admin ??= await (await loadMysql2()).default.createConnection({ uri: MYSQL_URL });
    const name = `${prefix}_${made++}`;
    await admin.query(`CREATE DATABASE \`${name}\``);
    created.push(name);
    const url = new URL(MYSQL_URL);
    url.pathname = `/${name}`;
    return url.toString();
  };
  return {
    name: 'mariadb',
    dialect: 'mysql',
    skips: {
      'transactional-ddl':
        'MySQL commits each DDL statement: a failed run keeps what it did and the next run resumes where it stopped (test/mysql/migrate.test.ts)',
      'legacy-history':
        "version 0.1.0 had no MySQL engine: no MySQL store has our history in Drizzle's shared table to move",
    },
    unavailable,
    required: isCI,
    freshUrl,
    open: async (options) => openStore(await freshUrl(), options),
    openAt: (url, options) => openStore(url, options),
    cleanup: async () => {
      if (!admin) return;
      // The harness stays usable: a later open connects a new admin client.
      const client = admin;
      admin = undefined;
      for (const name of created.splice(0)) await client.query(`DROP DATABASE IF EXISTS \`${name}\``);
      await client.end();
    },
  };
}

/** Fail loudly under CI when a mandatory backend is missing; elsewhere say why it is skipped. */
export function reportAvailability(h: ContractHarness): boolean {
  return harnessAvailable(h);
}
