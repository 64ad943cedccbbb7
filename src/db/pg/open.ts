/**
 * Opening a PostgreSQL store: a postgres.js pool for a server, or PGlite (embedded, WASM) with pg_trgm.
 * Both are reached through Drizzle's PgDatabase, so repositories see one type.
 */
import { PGlite } from '@electric-sql/pglite';
import { pg_trgm } from '@electric-sql/pglite/contrib/pg_trgm';
import type { SQL } from 'drizzle-orm';
import { PgDialect as DrizzlePgCompiler, type PgDatabase, type PgQueryResultHKT } from 'drizzle-orm/pg-core';
import { drizzle as drizzlePglite } from 'drizzle-orm/pglite';
import { drizzle as drizzlePostgres } from 'drizzle-orm/postgres-js';
import postgres from 'postgres';
import { ConnectionError } from '../../errors.js';
import * as pgSchema from '../../schema/pg.js';
import { redactUrl } from '../url.js';
import { type DataDirLock, lockDataDir } from './pglite-lock.js';

export type PgSchema = typeof pgSchema;
export type PgDb = PgDatabase<PgQueryResultHKT, PgSchema>;

/** Something that runs a query: the Drizzle database, a Drizzle transaction, or a reserved connection. */
export interface PgExecutor {
  execute(query: SQL): Promise<unknown>;
}

export interface OpenedPg {
  /** The current Drizzle database (on a server it is replaced after a connection is lost in a transaction). */
  readonly db: PgDb;
  /** Run `body` in one transaction: committed when it resolves, rolled back when it throws. */
  transaction<T>(body: (executor: PgExecutor) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

/** Errors after which the connection is gone: nothing more may be written on it. */
const CONNECTION_LOST = new Set(['CONNECTION_CLOSED', 'CONNECTION_ENDED', 'CONNECTION_DESTROYED', '57P01', '57P02', '57P03',
  'ECONNRESET', 'EPIPE', 'ETIMEDOUT']);
/** Whether `error`, or an error it wraps (a MigrationError around the driver's), says the connection is gone. */
function connectionLost(error: unknown): boolean {
  for (let e = error, depth = 0; e && typeof e === 'object' && depth < 5; depth++) {
    if (CONNECTION_LOST.has(String((e as { code?: unknown }).code ?? ''))) return true;
    e = (e as { cause?: unknown }).cause;
  }
  return false;
}

/**
 * Session parameters the code depends on, set on every connection so that a database, role or server default
 * (ALTER DATABASE … SET, postgresql.conf) cannot change what is written or read. On a server they travel in
 * the startup message, which outranks those defaults; PGlite gets them from set_config right after it starts.
 */
export const SESSION_SETTINGS = {
  // timestamptz text is parsed by codecs/time.ts: ISO form, offsets in whole minutes.
  DateStyle: 'ISO, MDY',
  TimeZone: 'UTC',
  IntervalStyle: 'postgres',
  // float8 text exact to the last bit (costs): any value above 0 on Postgres 12+, and 3 before.
  extra_float_digits: '3',
  // LIKE … ESCAPE '\' and the regexes in the migrations are written for standard strings.
  standard_conforming_strings: 'on',
  client_encoding: 'UTF8',
  bytea_output: 'hex',
  // The migrator looks at the tables after waiting on its lock, and concurrent writes update the same
  // session counters: both need each statement to see what committed before it (no serialization errors).
  default_transaction_isolation: 'read committed',
  // A non-zero limit makes GIN index scans (word and trigram search) return a random subset of the matches.
  gin_fuzzy_search_limit: '0',
} as const;

const compiler = new DrizzlePgCompiler();
const PREPARE_MAX_CHARS = 4096;

export interface PostgresOpenOptions {
  poolSize: number;
  connectTimeoutSeconds: number;
}

export async function openPostgres(url: string, options: PostgresOpenOptions): Promise<OpenedPg> {
  const where = redactUrl(url);
  const connect = () =>
    postgres(url, {
      max: options.poolSize,
      connect_timeout: options.connectTimeoutSeconds,
      onnotice: () => {}, // "extension already exists, skipping" and friends are not news
      connection: { application_name: 'hermes-sessiondb', ...SESSION_SETTINGS },
    });
  let client = connect();
  try {
    await client`select 1`;
  } catch (error) {
    await client.end({ timeout: 1 }).catch(() => {});
    throw new ConnectionError(where, describePgError(error), { cause: error });
  }
  let db = drizzlePostgres(client, { schema: pgSchema }) as unknown as PgDb;
  const retired: Array<Promise<void>> = [];

  /**
   * Transactions run on a reserved connection with explicit BEGIN/COMMIT/ROLLBACK rather than postgres.js'
   * begin(): when the server drops a connection mid-transaction, begin() writes ROLLBACK to the dead socket
   * and the pool later reuses it, and postgres.js 3.4.9 then throws from a timer (porsager/postgres #1154,
   * #1208): an uncatchable crash of the whole process. Here a lost connection is never written to again
   * and never released; the pool it came from is retired and a fresh one takes its place.
   */
  async function transaction<T>(body: (executor: PgExecutor) => Promise<T>): Promise<T> {
    const pool = client;
    const reserved = await pool.reserve();
    const executor: PgExecutor = {
      execute: (query) => {
        const compiled = compiler.sqlToQuery(query);
        // Short statements (the hot writes) become named prepared statements, cached per connection by text,
        // and skip parsing and planning; long ones (multi-row inserts of varying size) are not kept.
        return reserved.unsafe(compiled.sql, compiled.params as never[], { prepare: compiled.sql.length <= PREPARE_MAX_CHARS });
      },
    };
    let lost = false;
    try {
      await reserved.unsafe('BEGIN');
      const result = await body(executor);
      await reserved.unsafe('COMMIT');
      return result;
    } catch (error) {
      lost = connectionLost(error);
      if (!lost) {
        try {
          await reserved.unsafe('ROLLBACK');
        } catch (rollbackError) {
          lost = connectionLost(rollbackError);
        }
      }
      throw error;
    } finally {
      if (!lost) reserved.release();
      else if (pool === client) {
        client = connect();
        db = drizzlePostgres(client, { schema: pgSchema }) as unknown as PgDb;
        // Let the old pool's other queries finish; its dead connection is never released, so end() stops it.
        retired.push(pool.end({ timeout: 5 }).catch(() => {}));
      }
    }
  }

  return {
    get db() {
      return db;
    },
    transaction,
    close: async () => {
      await Promise.all([client.end({ timeout: 5 }), ...retired]);
    },
  };
}

export async function openPglite(dataDir: string | null): Promise<OpenedPg> {
  const where = dataDir === null ? 'pglite:memory' : `pglite:${dataDir}`;
  const lock = dataDir === null ? undefined : lockPgliteDataDir(where, dataDir);
  let client: PGlite;
  try {
    client = dataDir === null ? new PGlite({ extensions: { pg_trgm } }) : new PGlite(dataDir, { extensions: { pg_trgm } });
    await client.waitReady;
    await client.query('SELECT set_config(key, value, false) FROM json_each_text($1)', [JSON.stringify(SESSION_SETTINGS)]);
  } catch (error) {
    lock?.release();
    throw new ConnectionError(where, describePgError(error), { cause: error });
  }
  const db = drizzlePglite(client, { schema: pgSchema }) as unknown as PgDb;
  return {
    db,
    // One in-process connection: nothing can drop it, so Drizzle's transaction is the right tool.
    transaction: (body) => db.transaction((tx) => body(tx)),
    close: async () => {
      try {
        await client.close();
      } finally {
        lock?.release();
      }
    },
  };
}

/** The data directory's lock (see pglite-lock.ts), or a ConnectionError naming who holds it. */
function lockPgliteDataDir(where: string, dataDir: string): DataDirLock {
  try {
    return lockDataDir(dataDir);
  } catch (error) {
    throw new ConnectionError(where, error instanceof Error ? error.message : String(error), { cause: error });
  }
}

function describePgError(error: unknown): string {
  if (error instanceof Error) {
    const code = (error as { code?: unknown }).code;
    return typeof code === 'string' && code !== '' ? `${error.message} (${code})` : error.message;
  }
  return String(error);
}

/** Rows of a raw query, whichever driver ran it (postgres.js returns an array, PGlite `{ rows }`). */
export function rowsOf<T>(result: unknown): T[] {
  if (Array.isArray(result)) return result as T[];
  if (result && typeof result === 'object' && 'rows' in result && Array.isArray(result.rows)) return result.rows as T[];
  throw new TypeError('unexpected query result shape');
}
