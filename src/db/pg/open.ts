/**
 * Opening a PostgreSQL store: a postgres.js pool for a server, or PGlite (embedded, WASM) with pg_trgm.
 * Both are reached through Drizzle's PgDatabase, so repositories see one type.
 */
// size: opening a pool, adopting an app's client, and following a connection through its transactions belong together.
import type { ConnectionOptions as TlsConnectionOptions } from 'node:tls';
import type { SQL } from 'drizzle-orm';
import { PgDialect as DrizzlePgCompiler, type PgDatabase, type PgQueryResultHKT } from 'drizzle-orm/pg-core';
import type postgres from 'postgres';
import { ConnectionError, StoreClosedError, ValidationError } from '../../errors.js';
import type { Table } from '../ops.js';
import type * as pgSchema from '../../schema/pg.js';
import { hermesPgTables } from '../../schema/pg.js';
import { redactUrl, scrubErrorSecrets } from '../url.js';

export type PgSchema = typeof pgSchema;
export type PgDb = PgDatabase<PgQueryResultHKT, PgSchema>;

/** Something that runs a query: the Drizzle database, a Drizzle transaction, or a reserved connection. */
export interface PgExecutor {
  execute(query: SQL): Promise<unknown>;
  /** Rows as arrays of values in select-list order (see ops.values); without it, execute's rows are taken apart. */
  values?(query: SQL): Promise<unknown[][]>;
  /** Rows as arrays of values with their column names (see ops.table); without it, execute's rows are taken apart. */
  table?(query: SQL): Promise<Table>;
}

export interface OpenedPg {
  /** The current Drizzle database (on a server it is replaced after a connection is lost in a transaction). */
  readonly db: PgDb;
  /** Run one query outside a transaction on the current pool (what reads use). */
  execute(query: SQL): Promise<unknown>;
  /**
   * Run one statement outside a transaction (atomic on its own), as a named prepared statement: text built
   * once, bare parameters per call (the hot writes). Its rows.
   */
  statement(text: string, params: readonly unknown[]): Promise<Array<Record<string, unknown>>>;
  /** Like execute, rows as arrays of values in select-list order. */
  values(query: SQL): Promise<unknown[][]>;
  /** Like values, with the column names in select-list order. */
  table(query: SQL): Promise<Table>;
  /** Run `body` in one transaction: committed when it resolves, rolled back when it throws. */
  transaction<T>(body: (executor: PgExecutor) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

/** Errors after which the connection is gone: nothing more may be written on it. */
const CONNECTION_LOST = new Set([
  'CONNECTION_CLOSED',
  'CONNECTION_ENDED',
  'CONNECTION_DESTROYED',
  '57P01',
  '57P02',
  '57P03',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
]);
/** Whether `error`, or an error it wraps (a MigrationError around the driver's), says the connection is gone. */
export function connectionLost(error: unknown): boolean {
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
export const postgresSessionSettings = {
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

/**
 * What a client we did not open must already have (we cannot change its startup parameters, and a SET would
 * change the app's own queries): each check says why it matters. Time zone, interval style and bytea output do
 * not matter here (the codecs read any offset; no interval or bytea is read), and the isolation level is set
 * by each of our BEGINs.
 */
const REQUIRED_SETTINGS: ReadonlyArray<{
  name: keyof typeof postgresSessionSettings;
  ok: (value: string) => boolean;
  want: string;
}> = [
  { name: 'DateStyle', ok: (v) => /^ISO\b/i.test(v), want: "'ISO, MDY' (timestamptz text is read in ISO form)" },
  {
    name: 'extra_float_digits',
    ok: (v) => Number(v) >= 1,
    want: "'3' (any value of 1 or more prints float8 exactly: costs)",
  },
  {
    name: 'standard_conforming_strings',
    ok: (v) => v === 'on',
    want: "'on' (LIKE … ESCAPE '\\' and the search regexes)",
  },
  { name: 'client_encoding', ok: (v) => /^utf-?8$/i.test(v), want: "'UTF8'" },
  { name: 'gin_fuzzy_search_limit', ok: (v) => v === '0', want: "'0' (a limit makes search return a random subset)" },
];

const compiler = new DrizzlePgCompiler();

/**
 * postgres.js and Drizzle's adapter for it, loaded when a store on a server is opened (openPostgres,
 * adoptPostgres): SQLite and PGlite users, and every process that only imports the package, never load them.
 */
let postgresJs: { connect: typeof postgres; drizzle: typeof import('drizzle-orm/postgres-js').drizzle } | undefined;
async function loadPostgresJs(): Promise<NonNullable<typeof postgresJs>> {
  if (!postgresJs) {
    const [driver, adapter] = await Promise.all([import('postgres'), import('drizzle-orm/postgres-js')]);
    postgresJs = { connect: driver.default, drizzle: adapter.drizzle };
  }
  return postgresJs;
}

/** Drizzle over a postgres.js client; reached only through openPostgres or adoptPostgres, which load it first. */
function drizzlePostgres(client: postgres.Sql, config: { schema: ReturnType<typeof hermesPgTables> }) {
  if (!postgresJs) throw new Error('postgres.js is not loaded: open the store with openPostgres or adoptPostgres');
  return postgresJs.drizzle(client, config);
}
const PREPARE_MAX_CHARS = 4096;

export interface PostgresOpenOptions {
  poolSize: number;
  connectTimeoutSeconds: number;
  /** Where our tables live (the Drizzle instance's relational queries target them there); default public. */
  schema?: string;
  /** postgres.js' `ssl` option, as it takes it (default: the URL's sslmode, else false). */
  ssl?: boolean | 'require' | 'allow' | 'prefer' | 'verify-full' | TlsConnectionOptions;
  /** statement_timeout in ms, sent in the startup message (0 = none). Unset: the server's default. */
  statementTimeoutMs?: number;
}

export async function openPostgres(url: string, options: PostgresOpenOptions): Promise<OpenedPg> {
  const where = redactUrl(url);
  const { connect: postgresJsClient } = await loadPostgresJs();
  const connect = () =>
    postgresJsClient(url, {
      max: options.poolSize,
      connect_timeout: options.connectTimeoutSeconds,
      onnotice: () => {}, // "extension already exists, skipping" and friends are not news
      connection: {
        application_name: 'hermes-sessiondb',
        ...postgresSessionSettings,
        ...(options.statementTimeoutMs === undefined ? {} : { statement_timeout: options.statementTimeoutMs }),
      },
      ...(options.ssl === undefined ? {} : { ssl: options.ssl }),
    });
  let client: ReturnType<typeof connect>;
  try {
    client = connect();
  } catch (error) {
    // postgres.js parses the URL here, and Node's URL errors quote all of it.
    throw new ConnectionError(where, describePgError(scrubErrorSecrets(error, url)), { cause: error });
  }
  try {
    // postgres.js 3.4.9 retries forever when every host of a multi-host URL refuses (porsager/postgres#1174):
    // give up after each host had its connect_timeout, and a second more.
    const hosts = Math.max(1, /^[^/]*\/\/[^/?#]*/.exec(url)?.[0].replace(/^.*@/, '').split(',').length ?? 1);
    const deadlineMs = (options.connectTimeoutSeconds * hosts + 1) * 1000;
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no host answered within ${deadlineMs / 1000} s`)), deadlineMs);
    });
    try {
      await Promise.race([client`select 1`, deadline]);
    } finally {
      clearTimeout(timer);
    }
  } catch (error) {
    await client.end({ timeout: 1 }).catch(() => {});
    throw new ConnectionError(where, describePgError(scrubErrorSecrets(error, url)), { cause: error });
  }
  return poolSession(client, connect, where, options.schema);
}

/**
 * Use an app's postgres.js client. Its connections were started by the app, so the session parameters we
 * depend on are checked rather than set (refused, naming each one, before anything touches the client), and
 * the client is never ended: close() only stops our own use of it.
 */
export async function adoptPostgres(client: postgres.Sql, where: string, schema?: string): Promise<OpenedPg> {
  await loadPostgresJs();
  const transform = (client.options as unknown as { transform?: Record<string, unknown> }).transform ?? {};
  const transformed = ['column', 'value', 'row'].filter((key) => {
    const part = transform[key] as { from?: unknown; to?: unknown } | undefined;
    return typeof part?.from === 'function' || typeof part?.to === 'function';
  });
  if (transformed.length > 0) {
    throw new ValidationError(
      'target',
      `this postgres.js client transforms ${transformed.join(', ')} (the transform option): our queries read the ` +
        "server's own column names and values. Pass a client created without transform.",
    );
  }
  let current: Record<string, string>;
  try {
    const names = [...REQUIRED_SETTINGS.map((s) => s.name), 'default_transaction_isolation'];
    const rows = await client.unsafe<Array<{ name: string; value: string }>>(
      "SELECT name, current_setting(name) AS value FROM unnest(string_to_array($1::text, ',')) AS name",
      [names.join(',')],
    );
    current = Object.fromEntries(rows.map((r) => [r.name, r.value]));
  } catch (error) {
    throw new ConnectionError(where, describePgError(error), { cause: error });
  }
  const wrong = REQUIRED_SETTINGS.filter((s) => !s.ok(current[s.name] ?? ''));
  if (wrong.length > 0) {
    throw new ConnectionError(
      where,
      `this client's session settings differ from what the store reads and writes: ` +
        wrong.map((s) => `${s.name} is '${current[s.name]}', must be ${s.want}`).join('; ') +
        ". Create the client with the store's settings in its startup parameters: " +
        'postgres(url, { connection: postgresSessionSettings }) (exported by hermes-sessiondb), ' +
        'or set them on the database or role (ALTER DATABASE … SET …).',
    );
  }
  // A statement sent alone runs at the client's default isolation: ours only where that is read committed.
  return poolSession(client, undefined, where, schema, current.default_transaction_isolation === 'read committed');
}

/** The part of a postgres.js 3.4.9 connection object a transaction watches (src/connection.js, src/index.js). */
interface DriverConnection {
  /** Called once by the pool when the connection's socket has closed (what postgres.js' own begin() uses). */
  onclose?: ((error: unknown) => void) | null;
}

/**
 * Learn when a reserved connection closes. postgres.js hands the connection object to a query's `onexecute`
 * as it writes the query (here: BEGIN), and the pool calls the object's `onclose` from the socket's close
 * event, in the same turn as the socket is dropped: so "not closed" before a send means the socket is there.
 */
function watchConnection(): {
  /** The query options of the first statement (BEGIN): they hand the connection over (`onexecute`, untyped). */
  readonly options: postgres.UnsafeQueryOptions;
  closed(): boolean;
  /** The driver's CONNECTION_CLOSED error, once closed. */
  closedWith(): unknown;
  /** Stop watching (the connection goes back to the pool, or is abandoned). */
  stop(): void;
} {
  let connection: DriverConnection | undefined;
  let closed = false;
  let closedWith: unknown;
  const onclose = (error: unknown) => {
    closed = true;
    closedWith = error;
  };
  const options = {
    onexecute: (c: DriverConnection) => {
      connection = c;
      c.onclose = onclose;
      // postgres.js reads this as "the connection can take more queries now", as it would without onexecute.
      return true;
    },
  };
  return {
    options: options as postgres.UnsafeQueryOptions,
    closed: () => closed,
    closedWith: () => closedWith,
    stop: () => {
      if (connection?.onclose === onclose) connection.onclose = null;
    },
  };
}

/**
 * Reads and safe transactions over a postgres.js pool. `recreate` is how to open a fresh pool after a
 * connection is lost mid-transaction (a pool we opened); without it (the app's client) the lost connection
 * is simply never used again (postgres.js takes a closed connection back into its pool by itself) and the
 * client is never ended.
 */
// size: one closure over the pool, its lost connections and its recreation: split, each part would need them all.
function poolSession(
  initial: postgres.Sql,
  recreate: (() => postgres.Sql) | undefined,
  where: string,
  schema: string | undefined,
  readCommittedByDefault = true,
): OpenedPg {
  let client = initial;
  let db = drizzlePostgres(client, { schema: hermesPgTables(schema) }) as unknown as PgDb;
  const retired: Array<Promise<void>> = [];
  let closed = false;
  // Transactions waiting for a connection of the current pool. postgres.js never answers a reserve() still
  // queued when its pool ends, so retiring or closing a pool hands each waiter back (to try the fresh pool).
  let waiting = new Set<() => void>();
  const abandonWaiting = () => {
    const abandoned = [...waiting];
    waiting = new Set();
    for (const abandon of abandoned) abandon();
  };

  // Reads sent to the current pool and not yet answered. A query still queued in a pool when it ends is
  // never answered either: once a retired pool has ended, each read left is run again on the fresh pool
  // (it was never sent; a read is safe to repeat anyway), and once the store is closed, rejected.
  // The same holds for a single statement (a write outside a transaction): stranded, it was never sent.
  let reading = new Set<() => void>();
  function onPool<T>(send: () => Promise<T>): Promise<T> {
    return new Promise((resolve, reject) => {
      const attempt = () => {
        if (closed) return reject(new StoreClosedError());
        const pending = reading;
        const again = () => attempt();
        pending.add(again);
        send().then(
          (result) => pending.delete(again) && resolve(result),
          (error: unknown) => pending.delete(again) && reject(error),
        );
      };
      attempt();
    });
  }
  type Rows = Array<Record<string, unknown>>;
  // Reads compile as transactions do: short statements are prepared once per connection (no parse and
  // plan per call), and answered as postgres.js gives rows (or, for `values`, arrays without an object each).
  const unsafe = (pool: postgres.Sql | postgres.ReservedSql, query: SQL) => {
    const compiled = compiler.sqlToQuery(query);
    return pool.unsafe(compiled.sql, compiled.params as never[], { prepare: compiled.sql.length <= PREPARE_MAX_CHARS });
  };
  const execute = (query: SQL): Promise<unknown> => onPool(() => unsafe(client, query));
  const values = (query: SQL): Promise<unknown[][]> =>
    onPool(async () => (await unsafe(client, query).values()) as unknown[][]);
  const table = (query: SQL): Promise<Table> =>
    onPool(async () => {
      const found = await unsafe(client, query).values();
      return { columns: found.columns.map((c) => c.name), rows: found as unknown as unknown[][] };
    });
  // A statement alone must not run under another isolation level (an app's client may default to serializable,
  // where a concurrent update of the session row fails instead of waiting): then it gets our BEGIN and COMMIT.
  const statement = readCommittedByDefault
    ? (text: string, params: readonly unknown[]) =>
        onPool(() => client.unsafe(text, params as never[], { prepare: true }) as Promise<Rows>)
    : (text: string, params: readonly unknown[]) => inTransaction((send) => send(text, params, true));
  const rerunStranded = (pending: Set<() => void>) => {
    const stranded = [...pending];
    pending.clear();
    for (const again of stranded) again();
  };

  /** A reserved connection of the current pool, moving to the fresh pool when the current one is retired first. */
  async function reserve(): Promise<{ pool: postgres.Sql; reserved: postgres.ReservedSql }> {
    for (;;) {
      if (closed) throw new StoreClosedError();
      const pool = client;
      const waiters = waiting;
      const reserved = await new Promise<postgres.ReservedSql | undefined>((resolve, reject) => {
        const abandon = () => resolve(undefined);
        waiters.add(abandon);
        pool.reserve().then(
          (connection) => {
            if (waiters.delete(abandon)) resolve(connection);
            else connection.release(); // handed back already: nothing was sent on it
          },
          (error: unknown) => {
            waiters.delete(abandon);
            reject(error);
          },
        );
      });
      if (reserved) return { pool, reserved };
    }
  }

  /**
   * Transactions run on a reserved connection with explicit BEGIN/COMMIT/ROLLBACK rather than postgres.js'
   * begin(): when the server drops a connection mid-transaction, begin() writes ROLLBACK to the dead socket
   * and the pool later reuses it. Here a lost connection is never written to again and never released; the
   * pool it came from is retired and a fresh one takes its place.
   *
   * postgres.js 3.4.9 (pinned in package.json) also takes a statement for a reserved connection whose socket
   * has closed and throws from a timer while writing it (porsager/postgres #1154, #1208): an uncatchable crash
   * of the whole process. A connection can close while nothing is in flight on it (the app's transaction body
   * awaits something else), so each transaction watches its connection's close (see watchConnection) and
   * refuses a statement, COMMIT or ROLLBACK meant for a closed one instead of sending it.
   */
  function transaction<T>(body: (executor: PgExecutor) => Promise<T>): Promise<T> {
    return inTransaction((send) =>
      body({
        execute: (query) => {
          const compiled = compiler.sqlToQuery(query);
          // Short statements (the hot writes) become named prepared statements, cached per connection by text,
          // and skip parsing and planning; long ones (multi-row inserts of varying size) are not kept.
          return send(compiled.sql, compiled.params, compiled.sql.length <= PREPARE_MAX_CHARS);
        },
      }),
    );
  }

  /** Sends one statement of a transaction on its reserved connection (refused once that connection closed). */
  type Send = (text: string, params: readonly unknown[], prepare: boolean) => Promise<Rows>;

  async function inTransaction<T>(work: (send: Send) => Promise<T>): Promise<T> {
    const { pool, reserved } = await reserve();
    const watch = watchConnection();
    let lost = false;
    const refusal = (next: string) =>
      new ConnectionError(
        where,
        `the server closed the connection of a transaction before its ${next} was sent; nothing of the transaction was committed`,
        { cause: watch.closedWith(), lost: true },
      );
    const send: Send = (text, params, prepare) =>
      watch.closed()
        ? Promise.reject(refusal('next statement'))
        : (reserved.unsafe(text, params as never[], { prepare }) as Promise<Rows>);
    try {
      // Explicit, so that a default_transaction_isolation of the database or of an app's client does not apply.
      await reserved.unsafe('BEGIN ISOLATION LEVEL READ COMMITTED', [], watch.options);
      const result = await work(send);
      if (watch.closed()) throw refusal('COMMIT');
      await reserved.unsafe('COMMIT');
      return result;
    } catch (error) {
      lost = connectionLost(error) || watch.closed();
      if (!lost) {
        try {
          await reserved.unsafe('ROLLBACK');
        } catch (rollbackError) {
          lost = connectionLost(rollbackError);
        }
      }
      throw error;
    } finally {
      // A connection that closed is never released: postgres.js would hand it out again with no socket.
      lost ||= watch.closed();
      watch.stop();
      if (!lost) reserved.release();
      else if (pool === client && recreate) {
        const oldReads = reading;
        client = recreate();
        db = drizzlePostgres(client, { schema: hermesPgTables(schema) }) as unknown as PgDb;
        reading = new Set();
        abandonWaiting();
        // Let the old pool's other queries finish; its dead connection is never released, so end() stops it.
        retired.push(
          pool
            .end({ timeout: 5 })
            .catch(() => {})
            .then(() => rerunStranded(oldReads)),
        );
      }
    }
  }

  return {
    get db() {
      return db;
    },
    execute,
    statement,
    values,
    table,
    transaction,
    close: async () => {
      closed = true;
      abandonWaiting();
      try {
        // The app's client stays open: its reads and transactions of ours have settled (the store drains them).
        await Promise.all([recreate ? client.end({ timeout: 5 }) : undefined, ...retired]);
      } finally {
        rerunStranded(reading); // each one rejects: the store is closed
      }
    },
  };
}

export function describePgError(error: unknown): string {
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

/** The row count of a write, whichever driver ran it (postgres.js: the result's `count`; PGlite: `affectedRows`). */
export function changesOf(result: unknown): number {
  if (result && typeof result === 'object') {
    if ('count' in result && typeof result.count === 'number') return result.count;
    if ('affectedRows' in result && typeof result.affectedRows === 'number') return result.affectedRows;
  }
  throw new TypeError('unexpected write result shape: no row count');
}
