/**
 * `openStore(target, options)`: validate the options, pick the engine from the URL (or the client the app
 * passed), let it open the store, then the shared tail: migrate, check the search structures, activate.
 */
import { z } from 'zod';
import { nowEpochSeconds } from './codecs/time.js';
import { type OpenRequest, type OpenedStore, POOL_OPTIONS } from './db/engine.js';
import { engineOpenOptions } from './db/engine-options.js';
import { type ClientTarget, type StoreLocation, engines } from './db/engines.js';
import { assertHoldsStore } from './db/must-exist.js';
import { missingSearchStructuresError } from './db/search-structures.js';
import { type PickedTarget, type StoreTarget, pickEngine } from './db/targets.js';
import { DatabaseError, ValidationError } from './errors.js';
import type { AnySessionStore } from './store.js';
import { DEFAULT_RANK_WINDOW } from './repos/search.js';

export const openStoreOptionsSchema = z
  .object({
    /** Apply pending migrations on open (default true). With false the database is used as it is. */
    migrate: z.boolean().default(true),
    /** A server URL's pool (postgres://, mysql://): connections in it (default 10). */
    poolSize: z.number().int().min(1).max(1000).default(10),
    /** A server URL's pool (postgres://, mysql://): seconds to wait for a connection (default 10). */
    connectTimeoutSeconds: z.number().positive().max(3600).default(10),
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
     * Open a store whose search tables, columns, indexes or triggers are gone (typically dropped by
     * `drizzle-kit push`) with a warning instead of MigrationError('MISSING_SEARCH_STRUCTURES'). For reading
     * such a store out (copyStore into a fresh one), not for serving.
     */
    allowMissingSearchStructures: z.boolean().default(false),
    /** The clock writes use, in epoch seconds (default: the wall clock to the microsecond). For tests and replays. */
    clock: z.custom<() => number>((value) => typeof value === 'function', { error: 'must be a function' }).optional(),
    // What one engine alone takes, each described in its folder (src/db/<engine>/options.ts).
    ...engineOpenOptions,
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
