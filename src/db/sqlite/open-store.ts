/** An SQLite store: a file or memory URL, or the app's better-sqlite3 Database. Loaded when one is opened. */
import { ValidationError } from '../../errors.js';
import { SessionStore } from '../../store.js';
import type { OpenRequest, OpenedStore, ParsedOpenOptions } from '../engine.js';
import { defaultMigrationsFolder } from '../migrations.js';
import { SqliteBackend } from './backend.js';
import { SqliteRunner } from './runner.js';
import { SqliteSpelling } from './spelling.js';
import type { SqliteClientTarget, SqliteLocation } from './engine.js';
import { sqliteEngine } from './engine.js';
import { adoptSqlite, applyBusyTimeout, openSqlite } from './open.js';

/** How long SQLite waits for a lock while a store opens (then `busyTimeoutMs`). */
const OPEN_BUSY_TIMEOUT_MS = 1000;

export function openSqliteStore(
  request: OpenRequest<SqliteLocation, SqliteClientTarget>,
  opts: ParsedOpenOptions,
  clock: () => number,
): OpenedStore {
  // Opening (header read, migrations, journal mode) happens once and may meet other processes doing the
  // same: it waits for locks as long as it always did. Serving uses the short timeout, set in serve().
  const openBusyTimeoutMs = Math.max(opts.busyTimeoutMs, OPEN_BUSY_TIMEOUT_MS);
  let sqlite: SqliteBackend;
  if (request.client) {
    const client = request.client.client;
    const where = sqliteEngine.describeClient(request.client);
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
    const { path, memory } = request.location;
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
  const spelling = new SqliteSpelling();
  const store = new SessionStore<'sqlite'>(
    sqlite,
    { spelling, runner: new SqliteRunner(sqlite.client, opts.writeDeadlineMs, spelling) },
    clock,
    opts.searchRankWindow,
  );
  return { backend: sqlite, store, serve: () => applyBusyTimeout(sqlite.client, opts.busyTimeoutMs) };
}
