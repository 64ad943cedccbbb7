/**
 * Postgres' entry in the engine registry: postgres:// URLs and the app's postgres.js client (a server), pglite:
 * URLs and the app's PGlite instance (embedded). One dialect, two drivers.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Sql as PostgresSql } from 'postgres';
import { StoreNotFoundError } from '../../errors.js';
import type { EngineDescriptor } from '../engine.js';

/** A postgres.js client, whatever custom types it was created with. */
export type PostgresClient = PostgresSql<Record<string, unknown>> | PostgresSql;

/**
 * A PGlite instance, by the members the store relies on. Structural on purpose: PGlite's own declarations need
 * @types/emscripten, which PGlite does not give its users, so naming its class here would break every strict
 * consumer's compile (skipLibCheck: false) whether it uses PGlite or not. Any PGlite instance fits.
 */
export interface PgliteClient {
  query(...args: never[]): Promise<unknown>;
  exec(...args: never[]): Promise<unknown>;
  transaction(...args: never[]): Promise<unknown>;
  readonly waitReady: Promise<void>;
}

export type PgLocation = { backend: 'postgres'; url: string } | { backend: 'pglite'; dataDir: string | null };
export type PgClientTarget = { kind: 'postgres'; client: PostgresSql } | { kind: 'pglite'; client: PgliteClient };

/** The pglite: URL forms of an in-memory instance (no data directory). */
const IN_MEMORY_PGLITE = new Set(['memory', ':memory:', 'memory:']);

/** PGlite (like initdb) writes this file first; a directory without it holds no database yet. */
const DATA_DIR_MARKER = 'PG_VERSION';

/** postgres.js' own name for each pool option, for the message refusing it on a client the app created. */
const POSTGRES_JS_NAMES = {
  ssl: 'ssl',
  statementTimeoutMs: 'connection: { statement_timeout }',
  poolSize: 'max',
  connectTimeoutSeconds: 'connect_timeout',
} as const;

const isFunction = (value: unknown): boolean => typeof value === 'function';

/**
 * Parse a postgres:// URL as postgres.js 3.4 does (src/index.js, parseUrl): the host list runs from the first
 * `@` to the first `/` or `?`, and only its first host is given to the URL parser. Throws when postgres.js would.
 */
function postgresJsUrl(url: string): { parsed: URL; hosts: string } {
  let hosts = url.slice(url.indexOf('://') + 3).split(/[?/]/)[0] ?? '';
  hosts = decodeURIComponent(hosts.slice(hosts.indexOf('@') + 1));
  const parsed = new URL(url.replace(hosts, hosts.split(',')[0] ?? ''));
  decodeURIComponent(parsed.username);
  decodeURIComponent(parsed.password);
  return { parsed, hosts };
}

/** Why postgres.js would not take this postgres:// URL (or would misread it), or null when it takes it. */
function postgresUrlProblem(url: string): string | null {
  let parsed: URL;
  let hosts: string;
  try {
    ({ parsed, hosts } = postgresJsUrl(url));
  } catch {
    return 'not a valid postgres:// URL (percent-encode any of : / @ ? # % in the user name or password)';
  }
  // postgres.js ends the user info at the first @, the URL parser at the last: with a host list, the rest of
  // the password would become host names to look up and connect to.
  if (hosts.includes(',') && hosts.includes('@')) {
    return 'with several hosts, an @ in the user name or password must be percent-encoded (%40)';
  }
  if (!parsed.hostname && !parsed.searchParams.get('host')) return 'no host';
  return null;
}

export const pgEngine: EngineDescriptor<'pg', PgLocation, PgClientTarget> = {
  name: 'pg',
  hasSchemas: true,
  schemes: ['postgres://', 'postgresql://', 'pglite:'],
  bareAuthority: /^\s*postgres(?:ql)?:/i,
  parseUrl(url, reader) {
    if (/^postgres(ql)?:\/\//i.test(url)) {
      const problem = postgresUrlProblem(url);
      if (problem) reader.refuse(problem);
      return { backend: 'postgres', url };
    }
    if (/^\s*postgres(ql)?:/i.test(url)) reader.refuse('a Postgres URL starts with postgres:// or postgresql://');
    const pglite = /^pglite:(?:\/\/)?(.*)$/i.exec(url);
    if (!pglite) return undefined;
    const dir = pglite[1] ?? '';
    if (dir === '') reader.refuse('pglite: needs a data directory or "memory"');
    // "memory:" too, by analogy with sqlite::memory: (it once made a directory literally named "memory:").
    return { backend: 'pglite', dataDir: IN_MEMORY_PGLITE.has(dir) ? null : dir };
  },
  urlPasswords: (url) => [postgresJsUrl(url).parsed.password],
  clients: ['a postgres.js Sql client', 'a PGlite instance'],
  optionSchemes: (option) => (option === 'ssl' || option === 'statementTimeoutMs' ? ['postgres://'] : []),
  classifyClient(target) {
    const t = target as Record<string, unknown>;
    // postgres.js: the tagged-template function itself, with unsafe/reserve/begin/end and its parsed options.
    if (
      typeof target === 'function' &&
      isFunction(t.unsafe) &&
      isFunction(t.reserve) &&
      isFunction(t.end) &&
      typeof t.options === 'object' &&
      t.options !== null
    )
      return { kind: 'postgres', client: target as PostgresSql };
    // PGlite: query/exec/transaction and a waitReady promise.
    if (
      isFunction(t.query) &&
      isFunction(t.exec) &&
      isFunction(t.transaction) &&
      isFunction((t.waitReady as { then?: unknown } | undefined)?.then)
    )
      return { kind: 'pglite', client: target as unknown as PgliteClient };
    return undefined;
  },
  describeClient(target) {
    if (target.kind === 'postgres') {
      const o = target.client.options as { host?: unknown; port?: unknown; database?: unknown };
      const host = Array.isArray(o.host) ? o.host.join(',') : String(o.host ?? '');
      const port = Array.isArray(o.port) ? String(o.port[0]) : String(o.port ?? '');
      return `postgres client (${host}${port ? `:${port}` : ''}/${String(o.database ?? '')})`;
    }
    const dataDir = (target.client as { dataDir?: unknown }).dataDir;
    return `pglite client (${typeof dataDir === 'string' && dataDir !== '' ? dataDir : 'memory'})`;
  },
  where(location) {
    if (location.backend === 'postgres') return { kind: 'server', url: location.url };
    return location.dataDir === null ? { kind: 'memory' } : { kind: 'directory', path: location.dataDir };
  },
  // poolSize and connectTimeoutSeconds are ignored by PGlite URLs, as they always were.
  urlOptions: (location) =>
    location.backend === 'postgres'
      ? ['ssl', 'statementTimeoutMs', 'poolSize', 'connectTimeoutSeconds']
      : ['poolSize', 'connectTimeoutSeconds'],
  clientOptionHint: (client, option) =>
    client.kind === 'postgres'
      ? `set it where the client is created: postgres(url, { ${POSTGRES_JS_NAMES[option]} })`
      : undefined,
  assertLocationExists(location) {
    if (location.backend === 'postgres') return; // checked once connected: see assertHoldsStore
    if (location.dataDir === null) {
      throw new StoreNotFoundError('pglite:memory', 'MISSING', 'memory', 'an in-memory database is always new');
    }
    const where = `pglite:${location.dataDir}`;
    const dir = path.resolve(location.dataDir);
    const stat = fs.statSync(dir, { throwIfNoEntry: false });
    if (stat === undefined) throw new StoreNotFoundError(where, 'MISSING', dir, `no such directory ${dir}`);
    if (!stat.isDirectory()) throw new StoreNotFoundError(where, 'NO_STORE', dir, `${dir} is not a directory`);
    if (!fs.existsSync(path.join(dir, DATA_DIR_MARKER))) {
      throw new StoreNotFoundError(where, 'NO_STORE', dir, `${dir} holds no PGlite database (no ${DATA_DIR_MARKER})`);
    }
  },
  refuseOptions() {},
  open: async (request, options, clock) => (await import('./open-store.js')).openPgStore(request, options, clock),
  constraintCodes: { '23503': 'foreign-key', '23505': 'unique' },
  searchStructuresPushDrops: 'generated columns, indexes and triggers',
  testing: async () => (await import('./testing.js')).pgTesting,
};
