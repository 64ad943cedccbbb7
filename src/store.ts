/**
 * `openStore(url, options)` and the `SessionStore` facade. The facade grows the SessionDB contract
 * (sessions, messages, titles, …) on top of the backend chosen by the URL.
 */
import { z } from 'zod';
import type { Backend } from './db/backend.js';
import type { SchemaInfo } from './db/introspect.js';
import { type Dialect, type MigrationReport, type MigrationStatus, defaultMigrationsFolder } from './db/migrations.js';
import { PgBackend } from './db/pg/backend.js';
import { openPglite, openPostgres } from './db/pg/open.js';
import { SqliteBackend } from './db/sqlite/backend.js';
import { openSqlite } from './db/sqlite/open.js';
import { parseStoreUrl, redactUrl } from './db/url.js';
import { StoreClosedError, ValidationError } from './errors.js';

export const openStoreOptionsSchema = z
  .object({
    /** Apply pending migrations on open (default true). With false the database is used as it is. */
    migrate: z.boolean().default(true),
    /** postgres:// only: connections in the pool (default 10). */
    poolSize: z.number().int().min(1).max(1000).default(10),
    /** postgres:// only: seconds to wait for a connection (default 10). */
    connectTimeoutSeconds: z.number().positive().max(3600).default(10),
    /** SQLite only: how long one statement waits for a lock inside SQLite (default 1000 ms). */
    busyTimeoutMs: z.number().int().min(0).max(600_000).default(1000),
    /** SQLite only: how long a write keeps retrying a locked database before StoreBusyError (default 30 s). */
    writeDeadlineMs: z.number().int().min(0).max(3_600_000).default(30_000),
    /** SQLite only: `synchronous` pragma (default FULL; NORMAL trades the last commits on power loss for speed). */
    synchronous: z.enum(['FULL', 'NORMAL', 'EXTRA']).default('FULL'),
    /** SQLite only: force a journal mode instead of WAL-with-DELETE-fallback. */
    journalMode: z.enum(['WAL', 'DELETE']).optional(),
    /** SQLite only: open read-only (implies migrate: false). */
    readonly: z.boolean().default(false),
    /** Advanced: a different migrations folder (tests, forks). Defaults to the one shipped with the package. */
    migrationsFolder: z.string().min(1).optional(),
  })
  .strict();

export type OpenStoreOptions = z.input<typeof openStoreOptionsSchema>;

export class SessionStore {
  /** The store URL with any password redacted. */
  readonly url: string;
  private readonly backendImpl: SqliteBackend | PgBackend;
  private closed = false;

  constructor(backend: SqliteBackend | PgBackend) {
    this.backendImpl = backend;
    this.url = backend.url;
  }

  /** The dialect behind this store: 'sqlite' or 'pg'. */
  get dialect(): Dialect {
    return this.backendImpl.dialect;
  }

  /**
   * The backend, for callers who need the Drizzle instance or the raw connection (`backend.db`,
   * and `backend.client` on SQLite). Narrow on `backend.dialect`.
   */
  get backend(): SqliteBackend | PgBackend {
    this.assertOpen();
    return this.backendImpl;
  }

  /** Apply pending migrations (safe to call from several processes at once). */
  async migrate(): Promise<MigrationReport> {
    return this.backend.migrate();
  }

  /** Which shipped migrations the database has, which are pending, and any it has that we do not ship. */
  async migrationStatus(): Promise<MigrationStatus> {
    return this.backend.migrationStatus();
  }

  /** Tables, columns, indexes, triggers and extensions of the live database. */
  async introspect(): Promise<SchemaInfo> {
    return this.backend.introspect();
  }

  /** Close the connection (SQLite: checkpoint the WAL first). Calling it twice is harmless. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.backendImpl.close();
  }

  private assertOpen(): void {
    if (this.closed) throw new StoreClosedError();
  }
}

/** Open (and by default migrate) a store. See the README for the URL forms. */
export async function openStore(url: string, options: OpenStoreOptions = {}): Promise<SessionStore> {
  const parsedOptions = openStoreOptionsSchema.safeParse(options);
  if (!parsedOptions.success) {
    const issue = parsedOptions.error.issues[0];
    throw new ValidationError(`options.${issue?.path.join('.') || ''}`.replace(/\.$/, ''), issue?.message ?? 'invalid', {
      cause: parsedOptions.error,
    });
  }
  const opts = parsedOptions.data;
  const location = parseStoreUrl(url);

  let backend: SqliteBackend | PgBackend;
  if (location.backend === 'sqlite') {
    const readonly = opts.readonly && !location.memory;
    const client = openSqlite(location.path, location.memory, {
      busyTimeoutMs: opts.busyTimeoutMs,
      synchronous: opts.synchronous,
      journalMode: opts.journalMode,
      readonly,
    });
    backend = new SqliteBackend({
      url: location.memory ? 'sqlite::memory:' : `sqlite:${location.path}`,
      client,
      journalMode: opts.journalMode,
      migrationsFolder: opts.migrationsFolder ?? defaultMigrationsFolder('sqlite'),
      writeDeadlineMs: opts.writeDeadlineMs,
    });
  } else if (location.backend === 'postgres') {
    backend = new PgBackend({
      url: redactUrl(location.url),
      driver: 'postgres',
      opened: await openPostgres(location.url, {
        poolSize: opts.poolSize,
        connectTimeoutSeconds: opts.connectTimeoutSeconds,
      }),
      migrationsFolder: opts.migrationsFolder ?? defaultMigrationsFolder('pg'),
    });
  } else {
    backend = new PgBackend({
      url: location.dataDir === null ? 'pglite:memory' : `pglite:${location.dataDir}`,
      driver: 'pglite',
      opened: await openPglite(location.dataDir),
      migrationsFolder: opts.migrationsFolder ?? defaultMigrationsFolder('pg'),
    });
  }

  const store = new SessionStore(backend);
  try {
    if (opts.migrate && !opts.readonly) await store.migrate();
    // Only now, with the file accepted, change what is stored in it (SQLite's journal mode).
    await backend.activate();
  } catch (error) {
    await store.close().catch(() => {});
    throw error;
  }
  return store;
}

export type { Backend };
