/**
 * `openStore(target, options)`: validate the options, pick the engine from the URL (or the client the app
 * passed), let it open the store, then the shared tail: migrate, check the search structures, activate.
 */
import type { ConnectionOptions as TlsConnectionOptions } from 'node:tls';
import { z } from 'zod';
import { nowEpochSeconds } from './codecs/time.js';
import { type OpenRequest, type OpenedStore, POOL_OPTIONS } from './db/engine.js';
import { type ClientTarget, type StoreLocation, engines } from './db/engines.js';
import { assertHoldsStore } from './db/must-exist.js';
import { missingSearchStructuresError } from './db/search-structures.js';
import { type PickedTarget, type StoreTarget, pickEngine } from './db/targets.js';
import { DatabaseError, ValidationError } from './errors.js';
import type { AnySessionStore } from './store.js';
import { DEFAULT_RANK_WINDOW } from './repos/search.js';
import { schemaName } from './sql/tables.js';

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
    schema: schemaName.optional(),
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

/**
 * Refuse an option the target cannot honour, rather than ignore it: the pool options only reach a pool we
 * open; a client the app passed was configured by the app.
 */
function refuseInapplicableOptions({ engine, location, client }: PickedTarget, options: OpenStoreOptions): void {
  const taken = location ? engine.urlOptions(location) : [];
  for (const name of POOL_OPTIONS) {
    if (options[name] === undefined || taken.includes(name)) continue;
    let why: string;
    if (client) {
      why = `the ${client.kind} client was passed in, so it is configured by the app`;
      const hint = engine.clientOptionHint?.(client, name);
      if (hint) why += ` (${hint})`;
    } else {
      const takers = engines.flatMap((e) => e.optionSchemes?.(name) ?? []);
      why = `it applies to ${takers.join(' and ')} URLs only, not to ${location?.backend}`;
    }
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
  const picked = pickEngine(target);
  if (!picked) {
    const clients = engines.flatMap((e) => e.clients);
    throw new ValidationError(
      'target',
      `expected a store URL string, ${clients.slice(0, -1).join(', ')} or ${clients.at(-1)}`,
    );
  }
  const { engine, location } = picked;
  refuseInapplicableOptions(picked, options);
  const userClock = opts.clock;
  const clock = userClock ? () => userClock() : nowEpochSeconds;
  if (opts.mustExist && location) engine.assertLocationExists(location);
  const request = picked as OpenRequest<StoreLocation, ClientTarget>;
  engine.refuseOptions(options, request);
  const opened = await engine.open(request, opts, clock);
  await settle(
    opened,
    opts,
    location === undefined || engine.where(location).kind === 'server',
    engine.searchStructuresPushDrops,
  );
  return opened.store;
}

/** The shared tail: the checks, the migrations and the settings every engine's store goes through once opened. */
async function settle(
  { backend, store, check, serve }: OpenedStore,
  opts: z.output<typeof openStoreOptionsSchema>,
  onServer: boolean,
  pushDrops: string,
): Promise<void> {
  try {
    // A server database, or a client the app passed, always "exists": the test is whether it holds a store.
    if (opts.mustExist && onServer) await assertHoldsStore(backend);
    await check?.();
    if (opts.migrate && !opts.readonly) await store.migrate();
    const missing = await backend.missingSearchStructures();
    if (missing.length > 0) {
      // Refused, or (for reading a damaged store out) a warning.
      const error = missingSearchStructuresError(backend.url, pushDrops, missing);
      if (!opts.allowMissingSearchStructures) throw error;
      process.emitWarning(error.message, { code: 'HERMES_SESSIONDB_MISSING_SEARCH_STRUCTURES' });
    }
    // Only now, with the database accepted, change what is stored in it (SQLite's journal mode).
    await backend.activate();
    serve?.();
  } catch (error) {
    await store.close().catch(() => {});
    // Ours pass unchanged; a driver's error (a statement of the checks refused or timed out) is typed.
    throw DatabaseError.from(error);
  }
}
