/**
 * What openStore accepts besides a URL: a client the app already has. Recognised by shape, not instanceof,
 * since the app may load its own copy of the driver package.
 */
import type { Database as BetterSqlite3Database } from 'better-sqlite3';
import type { Sql as PostgresSql } from 'postgres';

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

/** A store URL, or an open client: a postgres.js `Sql`, a PGlite instance, a better-sqlite3 `Database`. */
export type StoreTarget = string | PostgresClient | PgliteClient | BetterSqlite3Database;

export type ClassifiedTarget =
  | { kind: 'url'; url: string }
  | { kind: 'postgres'; client: PostgresSql }
  | { kind: 'pglite'; client: PgliteClient }
  | { kind: 'sqlite'; client: BetterSqlite3Database };

const isFunction = (value: unknown): boolean => typeof value === 'function';

/** Which kind of client `target` is, or undefined when it is none we know. */
export function classifyTarget(target: unknown): ClassifiedTarget | undefined {
  if (typeof target === 'string') return { kind: 'url', url: target };
  if (target === null || (typeof target !== 'object' && typeof target !== 'function')) return undefined;
  const t = target as Record<string, unknown>;
  // postgres.js: the tagged-template function itself, with unsafe/reserve/begin/end and its parsed options.
  if (
    typeof target === 'function' &&
    isFunction(t.unsafe) &&
    isFunction(t.reserve) &&
    isFunction(t.end) &&
    typeof t.options === 'object' &&
    t.options !== null
  ) {
    return { kind: 'postgres', client: target as PostgresSql };
  }
  // PGlite: query/exec/transaction and a waitReady promise.
  if (
    isFunction(t.query) &&
    isFunction(t.exec) &&
    isFunction(t.transaction) &&
    isFunction((t.waitReady as { then?: unknown } | undefined)?.then)
  ) {
    return { kind: 'pglite', client: target as unknown as PgliteClient };
  }
  // better-sqlite3: prepare/pragma and its name/open/memory/readonly properties.
  if (
    isFunction(t.prepare) &&
    isFunction(t.pragma) &&
    typeof t.name === 'string' &&
    typeof t.open === 'boolean' &&
    typeof t.readonly === 'boolean'
  ) {
    return { kind: 'sqlite', client: target as BetterSqlite3Database };
  }
  return undefined;
}

/** How a client of each kind is named in messages (a client carries no URL of ours; never its password). */
export function describeClient(target: Exclude<ClassifiedTarget, { kind: 'url' }>): string {
  switch (target.kind) {
    case 'postgres': {
      const o = target.client.options as { host?: unknown; port?: unknown; database?: unknown };
      const host = Array.isArray(o.host) ? o.host.join(',') : String(o.host ?? '');
      const port = Array.isArray(o.port) ? String(o.port[0]) : String(o.port ?? '');
      return `postgres client (${host}${port ? `:${port}` : ''}/${String(o.database ?? '')})`;
    }
    case 'pglite': {
      const dataDir = (target.client as { dataDir?: unknown }).dataDir;
      return `pglite client (${typeof dataDir === 'string' && dataDir !== '' ? dataDir : 'memory'})`;
    }
    case 'sqlite':
      return `sqlite client (${target.client.memory ? ':memory:' : target.client.name})`;
  }
}
