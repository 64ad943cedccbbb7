/** `openStore(url, options)`: pick the backend from the URL, open it, migrate, and build the store. */
import { z } from 'zod';
import { nowEpochSeconds } from './codecs/time.js';
import { defaultMigrationsFolder } from './db/migrations.js';
import { assertHoldsStore, assertLocationExists } from './db/must-exist.js';
import { PgBackend } from './db/pg/backend.js';
import { PgDialect } from './db/pg/dialect.js';
import { openPglite, openPostgres } from './db/pg/open.js';
import { SqliteBackend } from './db/sqlite/backend.js';
import { SqliteDialect } from './db/sqlite/dialect.js';
import { applyBusyTimeout, openSqlite } from './db/sqlite/open.js';
import { parseStoreUrl, redactUrl } from './db/url.js';
import { ValidationError } from './errors.js';
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
    /** The clock writes use, in epoch seconds (default: the wall clock to the microsecond). For tests and replays. */
    clock: z.custom<() => number>((value) => typeof value === 'function', { error: 'must be a function' }).optional(),
  })
  .strict();

export type OpenStoreOptions = z.input<typeof openStoreOptionsSchema>;

/** Open (and by default migrate) a store. See the README for the URL forms. */
export async function openStore(url: string, options: OpenStoreOptions = {}): Promise<AnySessionStore> {
  const parsedOptions = openStoreOptionsSchema.safeParse(options);
  if (!parsedOptions.success) {
    const issue = parsedOptions.error.issues[0];
    const field = ['options', ...(issue?.path ?? [])].join('.');
    throw new ValidationError(field, issue?.message ?? 'invalid', { cause: parsedOptions.error });
  }
  const opts = parsedOptions.data;
  const location = parseStoreUrl(url);
  const userClock = opts.clock;
  const clock = userClock ? () => userClock() : nowEpochSeconds;
  if (opts.mustExist) assertLocationExists(location);

  let store: AnySessionStore;
  let backend: SqliteBackend | PgBackend;
  if (location.backend === 'sqlite') {
    // SQLite has no schemas: refuse rather than ignore an option that promises a layout it cannot have.
    if (opts.schema !== undefined) throw new ValidationError('options.schema', 'a Postgres option; SQLite has no schemas');
    const readonly = opts.readonly && !location.memory;
    const client = openSqlite(location.path, location.memory, {
      // Opening (header read, migrations, journal mode) happens once and may meet other processes doing the
      // same: it waits for locks as long as it always did. Serving uses the short timeout, set below.
      busyTimeoutMs: Math.max(opts.busyTimeoutMs, OPEN_BUSY_TIMEOUT_MS),
      synchronous: opts.synchronous,
      readonly,
      mustExist: opts.mustExist,
    });
    const sqlite = new SqliteBackend({
      url: location.memory ? 'sqlite::memory:' : `sqlite:${location.path}`,
      client,
      journalMode: opts.journalMode,
      migrationsFolder: opts.migrationsFolder ?? defaultMigrationsFolder('sqlite'),
      writeDeadlineMs: opts.writeDeadlineMs,
    });
    backend = sqlite;
    store = new SessionStore<'sqlite'>(sqlite, new SqliteDialect(client, opts.writeDeadlineMs), clock, opts.searchRankWindow);
  } else {
    const schema = opts.schema ?? DEFAULT_PG_SCHEMA;
    const pg =
      location.backend === 'postgres'
        ? new PgBackend({
            url: redactUrl(location.url),
            driver: 'postgres',
            opened: await openPostgres(location.url, {
              poolSize: opts.poolSize,
              connectTimeoutSeconds: opts.connectTimeoutSeconds,
              schema,
            }),
            migrationsFolder: opts.migrationsFolder ?? defaultMigrationsFolder('pg'),
            allowAsciiOnlyCtype: opts.allowAsciiOnlyCtype,
            schema,
          })
        : new PgBackend({
            url: location.dataDir === null ? 'pglite:memory' : `pglite:${location.dataDir}`,
            driver: 'pglite',
            opened: await openPglite(location.dataDir, schema),
            migrationsFolder: opts.migrationsFolder ?? defaultMigrationsFolder('pg'),
            allowAsciiOnlyCtype: opts.allowAsciiOnlyCtype,
            schema,
          });
    backend = pg;
    store = new SessionStore<'pg'>(pg, new PgDialect(pg, pg.names), clock, opts.searchRankWindow);
  }

  try {
    if (opts.mustExist && location.backend === 'postgres') await assertHoldsStore(backend);
    if (backend instanceof PgBackend) await backend.checkLocale();
    if (opts.migrate && !opts.readonly) await store.migrate();
    // Only now, with the file accepted, change what is stored in it (SQLite's journal mode).
    await backend.activate();
    if (backend instanceof SqliteBackend) applyBusyTimeout(backend.client, opts.busyTimeoutMs);
  } catch (error) {
    await store.close().catch(() => {});
    throw error;
  }
  return store;
}
