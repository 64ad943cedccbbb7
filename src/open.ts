/**
 * `openStore(target, options)`: pick the backend from the URL (or use the client the app passed), open it,
 * migrate, check the search structures, and build the store.
 */
import type { ConnectionOptions as TlsConnectionOptions } from 'node:tls';
import { z } from 'zod';
import { nowEpochSeconds } from './codecs/time.js';
import { defaultMigrationsFolder } from './db/migrations.js';
import { assertHoldsStore, assertLocationExists } from './db/must-exist.js';
import type { MysqlBackend } from './db/mysql/backend.js';
import { PgBackend } from './db/pg/backend.js';
import { PgDialect } from './db/pg/dialect.js';
import { type OpenedPg, adoptPostgres, openPostgres } from './db/pg/open.js';
import { SqliteBackend } from './db/sqlite/backend.js';
import { SqliteDialect } from './db/sqlite/dialect.js';
import { adoptSqlite, applyBusyTimeout, openSqlite } from './db/sqlite/open.js';
import { missingSearchStructuresError } from './db/search-structures.js';
import { type ClassifiedTarget, type StoreTarget, classifyTarget, describeClient } from './db/targets.js';
import { type StoreLocation, parseStoreUrl, redactUrl } from './db/url.js';
import { DatabaseError, ValidationError } from './errors.js';
import { type AnySessionStore, SessionStore } from './store.js';
import { DEFAULT_RANK_WINDOW } from './repos/search.js';
import { DEFAULT_PG_SCHEMA, pgSchemaName } from './sql/tables.js';

/** How long SQLite waits for a lock while a store opens (then `busyTimeoutMs`). */
const OPEN_BUSY_TIMEOUT_MS = 1000;

export const openStoreOptionsSchema = z
  .object({
    /** Apply pending migrations on open (default true). With false the database is used as it is. */
    migrate: z.boolean().default(true),
    /** postgres:// only: connections in the pool (default 10). */
    poolSize: z.number().int().min(1).max(1000).default(10),
    /** postgres:// only: seconds to wait for a connection (default 10). */
    connectTimeoutSeconds: z.number().positive().max(3600).default(10),
    /**
     * postgres:// only: postgres.js' `ssl` option as it takes it: true, false, 'require', 'allow', 'prefer',
     * 'verify-full', or a tls.connect() options object (ca, cert, key, rejectUnauthorized, servername, …).
     * Unset: the URL's `sslmode` (else no TLS).
     */
    ssl: z
      .union([
        z.boolean(),
        z.enum(['require', 'allow', 'prefer', 'verify-full']),
        z.custom<TlsConnectionOptions>(
          (value) => typeof value === 'object' && value !== null && !Array.isArray(value),
          {
            error: "must be a boolean, 'require', 'allow', 'prefer', 'verify-full' or a tls.connect() options object",
          },
        ),
      ])
      .optional(),
    /**
     * postgres:// only: statement_timeout in ms for the store's connections, in the startup message (0 = no
     * timeout). Unset: the server's, database's or role's default. Migrations are exempt.
     */
    statementTimeoutMs: z.number().int().min(0).max(2_147_483_647).optional(),
    /**
     * SQLite only: how long one statement waits for a lock inside SQLite (default 5 ms). That wait blocks the
     * event loop (better-sqlite3 is synchronous), so keep it short: past it a write waits asynchronously and
     * retries until `writeDeadlineMs`.
     */
    busyTimeoutMs: z.number().int().min(0).max(600_000).default(5),
    /** SQLite only: how long a write keeps retrying a locked database before StoreBusyError (default 30 s). */
    writeDeadlineMs: z.number().int().min(0).max(3_600_000).default(30_000),
    /** SQLite only: `synchronous` pragma (default FULL; NORMAL trades the last commits on power loss for speed). */
    synchronous: z.enum(['FULL', 'NORMAL', 'EXTRA']).default('FULL'),
    /** SQLite only: force a journal mode instead of WAL-with-DELETE-fallback. */
    journalMode: z.enum(['WAL', 'DELETE']).optional(),
    /** SQLite only: open read-only (implies migrate: false, and that the file must exist). */
    readonly: z.boolean().default(false),
    /**
     * Open only a store that is already there; never create one (default false). Refused with
     * StoreNotFoundError, nothing created: a missing SQLite file or PGlite data directory, a PGlite directory
     * holding no database, an in-memory database, and a Postgres database without hermes-sessiondb's migration
     * history (an empty one). With `migrate: true` an existing store is still migrated.
     */
    mustExist: z.boolean().default(false),
    /** Advanced: a different migrations folder (tests, forks). Defaults to the one shipped with the package. */
    migrationsFolder: z.string().min(1).optional(),
    /** Relevance ranks every match of a query, unless the query itself matches more than this many messages (default 10,000): then the newest this-many, and hits report it in `rankedWithin`. */
    searchRankWindow: z.number().int().min(1).max(10_000_000).default(DEFAULT_RANK_WINDOW),
    /**
     * Postgres: open a database whose LC_CTYPE does not see non-ASCII letters ('C') with a warning instead of
     * refusing it with UnsupportedLocaleError. For reading such a database out (copy, export), not for serving.
     */
    allowAsciiOnlyCtype: z.boolean().default(false),
    /**
     * Postgres only: the schema holding every table, function, index, trigger and sequence of the store, and its
     * migration history (created if missing). Default: the tables in `public`, as every store had before. Runtime
     * SQL names the schema explicitly, so the connection's search_path does not matter. Refused on SQLite.
     */
    schema: pgSchemaName.optional(),
    /**
     * Open a store whose search tables, columns, indexes or triggers are gone (typically dropped by
     * `drizzle-kit push`) with a warning instead of MigrationError('MISSING_SEARCH_STRUCTURES'). For reading
     * such a store out (copyStore into a fresh one), not for serving.
     */
    allowMissingSearchStructures: z.boolean().default(false),
    /** The clock writes use, in epoch seconds (default: the wall clock to the microsecond). For tests and replays. */
    clock: z.custom<() => number>((value) => typeof value === 'function', { error: 'must be a function' }).optional(),
  })
  .strict();

export type OpenStoreOptions = z.input<typeof openStoreOptionsSchema>;

/** Options that only make sense for a pool we open from a postgres:// URL, and postgres.js' own name for each. */
const POSTGRES_URL_OPTIONS = {
  ssl: 'ssl',
  statementTimeoutMs: 'connection: { statement_timeout }',
  poolSize: 'max',
  connectTimeoutSeconds: 'connect_timeout',
} as const;

/**
 * Refuse an option the target cannot honour, rather than ignore it: ssl and statementTimeoutMs only reach a
 * pool we open; a client the app passed was configured by the app.
 */
function refuseInapplicableOptions(target: ClassifiedTarget, options: OpenStoreOptions, backendName: string): void {
  if (backendName === 'postgres' && target.kind === 'url') return;
  for (const [name, postgresJsName] of Object.entries(POSTGRES_URL_OPTIONS)) {
    if (options[name as keyof typeof POSTGRES_URL_OPTIONS] === undefined) continue;
    // poolSize and connectTimeoutSeconds are ignored by SQLite and PGlite URLs, as they always were.
    if (target.kind === 'url' && (name === 'poolSize' || name === 'connectTimeoutSeconds')) continue;
    let why = `it applies to postgres:// URLs only, not to ${backendName}`;
    if (target.kind !== 'url') why = `the ${target.kind} client was passed in, so it is configured by the app`;
    if (target.kind === 'postgres')
      why += ` (set it where the client is created: postgres(url, { ${postgresJsName} }))`;
    throw new ValidationError(`options.${name}`, why);
  }
}

/**
 * Open (and by default migrate) a store. `target` is a store URL (see docs/api.md for the forms) or a client
 * the app already has: a postgres.js `Sql`, a PGlite instance or a better-sqlite3 `Database`. A client passed
 * in stays the app's: closing the store leaves it open.
 */
export async function openStore(target: StoreTarget, options: OpenStoreOptions = {}): Promise<AnySessionStore> {
  // Parsed once per store: zod's compiled fast path (built with new Function on a schema's first parse) would
  // cost several times the parse itself, at every process start.
  const parsedOptions = openStoreOptionsSchema.safeParse(options, { jitless: true });
  if (!parsedOptions.success) {
    const issue = parsedOptions.error.issues[0];
    const field = ['options', ...(issue?.path ?? [])].join('.');
    throw new ValidationError(field, issue?.message ?? 'invalid', { cause: parsedOptions.error });
  }
  const opts = parsedOptions.data;
  const classified = classifyTarget(target);
  if (!classified) {
    throw new ValidationError(
      'target',
      'expected a store URL string, a postgres.js Sql client, a PGlite instance or a better-sqlite3 Database',
    );
  }
  const location = classified.kind === 'url' ? parseStoreUrl(classified.url) : undefined;
  refuseInapplicableOptions(classified, options, location?.backend ?? classified.kind);
  const userClock = opts.clock;
  const clock = userClock ? () => userClock() : nowEpochSeconds;
  if (opts.mustExist && location) assertLocationExists(location);

  const { backend, store } =
    location?.backend === 'mysql'
      ? await openMysqlStore(location, opts, clock)
      : location?.backend === 'sqlite' || classified.kind === 'sqlite'
        ? openSqliteStore(classified, location, opts, clock)
        : await openPgStore(classified, location, opts, clock);

  try {
    // A server database, or a client the app passed, always "exists": the test is whether it holds a store.
    if (opts.mustExist && (location === undefined || location.backend === 'postgres' || location.backend === 'mysql'))
      await assertHoldsStore(backend);
    if (backend instanceof PgBackend) await backend.checkLocale();
    if (opts.migrate && !opts.readonly) await store.migrate();
    await checkSearchStructures(backend, opts.allowMissingSearchStructures);
    // Only now, with the file accepted, change what is stored in it (SQLite's journal mode).
    await backend.activate();
    if (backend instanceof SqliteBackend) applyBusyTimeout(backend.client, opts.busyTimeoutMs);
  } catch (error) {
    await store.close().catch(() => {});
    // Ours pass unchanged; a driver's error (a statement of the checks refused or timed out) is typed.
    throw DatabaseError.from(error);
  }
  return store;
}

/** Refuse (or, for reading a damaged store out, warn about) search structures that the migrations made and something removed. */
async function checkSearchStructures(
  backend: SqliteBackend | PgBackend | MysqlBackend,
  allowMissing: boolean,
): Promise<void> {
  const missing = await backend.missingSearchStructures();
  if (missing.length === 0) return;
  const error = missingSearchStructuresError(backend.url, backend.dialect, missing);
  if (!allowMissing) throw error;
  process.emitWarning(error.message, { code: 'HERMES_SESSIONDB_MISSING_SEARCH_STRUCTURES' });
}

type ParsedOptions = z.output<typeof openStoreOptionsSchema>;
type Clock = () => number;
type Opened = { backend: SqliteBackend | PgBackend | MysqlBackend; store: AnySessionStore };

/** A MySQL/MariaDB store from its URL. */
async function openMysqlStore(
  location: Extract<StoreLocation, { backend: 'mysql' }>,
  opts: ParsedOptions,
  clock: Clock,
): Promise<Opened> {
  if (opts.schema !== undefined)
    throw new ValidationError(
      'options.schema',
      'a Postgres option; a MySQL store is one database (name it in the URL)',
    );
  if (opts.readonly) throw new ValidationError('options.readonly', 'an SQLite option; use a read-only MySQL user');
  // Loaded on demand: mysql2 stays out of SQLite and Postgres users' processes.
  const [{ openMysql }, { MysqlBackend: Backend }, { MysqlDialect }] = await Promise.all([
    import('./db/mysql/open.js'),
    import('./db/mysql/backend.js'),
    import('./db/mysql/dialect.js'),
  ]);
  const opened = await openMysql(location.url, {
    poolSize: opts.poolSize,
    connectTimeoutSeconds: opts.connectTimeoutSeconds,
  });
  const mysql = new Backend({
    url: redactUrl(location.url),
    opened,
    migrationsFolder: opts.migrationsFolder ?? defaultMigrationsFolder('mysql'),
  });
  return {
    backend: mysql,
    store: new SessionStore<'mysql'>(mysql, new MysqlDialect(opened), clock, opts.searchRankWindow),
  };
}

/** An SQLite store: a file or memory URL, or the app's better-sqlite3 Database. */
function openSqliteStore(
  classified: ClassifiedTarget,
  location: StoreLocation | undefined,
  opts: ParsedOptions,
  clock: Clock,
): Opened {
  // SQLite has no schemas: refuse rather than ignore an option that promises a layout it cannot have.
  if (opts.schema !== undefined)
    throw new ValidationError('options.schema', 'a Postgres option; SQLite has no schemas');
  // Opening (header read, migrations, journal mode) happens once and may meet other processes doing the
  // same: it waits for locks as long as it always did. Serving uses the short timeout, set below.
  const openBusyTimeoutMs = Math.max(opts.busyTimeoutMs, OPEN_BUSY_TIMEOUT_MS);
  let sqlite: SqliteBackend;
  if (classified.kind === 'sqlite') {
    const client = classified.client;
    const where = describeClient(classified);
    if (opts.readonly && !client.readonly) {
      throw new ValidationError(
        'options.readonly',
        'the Database passed in is writable: open it with new Database(file, { readonly: true })',
      );
    }
    opts.readonly = client.readonly;
    const previousBusyTimeout = adoptSqlite(client, where, {
      busyTimeoutMs: openBusyTimeoutMs,
      synchronous: opts.synchronous,
    });
    sqlite = new SqliteBackend({
      url: where,
      client,
      journalMode: opts.journalMode,
      migrationsFolder: opts.migrationsFolder ?? defaultMigrationsFolder('sqlite'),
      writeDeadlineMs: opts.writeDeadlineMs,
      adopted: { busyTimeoutMs: previousBusyTimeout },
    });
  } else {
    const { path, memory } = location as Extract<typeof location, { backend: 'sqlite' }>;
    const client = openSqlite(path, memory, {
      busyTimeoutMs: openBusyTimeoutMs,
      synchronous: opts.synchronous,
      readonly: opts.readonly && !memory,
      mustExist: opts.mustExist,
    });
    sqlite = new SqliteBackend({
      url: memory ? 'sqlite::memory:' : `sqlite:${path}`,
      client,
      journalMode: opts.journalMode,
      migrationsFolder: opts.migrationsFolder ?? defaultMigrationsFolder('sqlite'),
      writeDeadlineMs: opts.writeDeadlineMs,
    });
  }
  const store = new SessionStore<'sqlite'>(
    sqlite,
    new SqliteDialect(sqlite.client, opts.writeDeadlineMs),
    clock,
    opts.searchRankWindow,
  );
  return { backend: sqlite, store };
}

/** A Postgres store: a server URL or the app's postgres.js client, a PGlite URL or the app's PGlite instance. */
async function openPgStore(
  classified: ClassifiedTarget,
  location: StoreLocation | undefined,
  opts: ParsedOptions,
  clock: Clock,
): Promise<Opened> {
  const schema = opts.schema ?? DEFAULT_PG_SCHEMA;
  let url: string;
  let driver: 'postgres' | 'pglite';
  let opened: OpenedPg;
  if (classified.kind === 'postgres') {
    url = describeClient(classified);
    driver = 'postgres';
    opened = await adoptPostgres(classified.client, url, schema);
  } else if (classified.kind === 'pglite') {
    url = describeClient(classified);
    driver = 'pglite';
    // Loaded on demand: the WASM package stays out of SQLite and server users' processes.
    const { adoptPglite } = await import('./db/pg/pglite.js');
    opened = await adoptPglite(classified.client, url, schema);
  } else if (location?.backend === 'postgres') {
    url = redactUrl(location.url);
    driver = 'postgres';
    opened = await openPostgres(location.url, {
      poolSize: opts.poolSize,
      connectTimeoutSeconds: opts.connectTimeoutSeconds,
      ssl: opts.ssl,
      statementTimeoutMs: opts.statementTimeoutMs,
      schema,
    });
  } else {
    const { dataDir } = location as Extract<typeof location, { backend: 'pglite' }>;
    url = dataDir === null ? 'pglite:memory' : `pglite:${dataDir}`;
    driver = 'pglite';
    const { openPglite } = await import('./db/pg/pglite.js');
    opened = await openPglite(dataDir, schema);
  }
  const pg = new PgBackend({
    url,
    driver,
    opened,
    migrationsFolder: opts.migrationsFolder ?? defaultMigrationsFolder('pg'),
    allowAsciiOnlyCtype: opts.allowAsciiOnlyCtype,
    schema,
  });
  return { backend: pg, store: new SessionStore<'pg'>(pg, new PgDialect(pg, pg.names), clock, opts.searchRankWindow) };
}
