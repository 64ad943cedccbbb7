/**
 * Opening a SQLite store with better-sqlite3 and the pragmas we stand behind:
 *
 * - `busy_timeout` first, so every later statement (including the journal-mode switch) waits for locks.
 * - `journal_mode=WAL`, falling back to DELETE where the filesystem refuses WAL (NFS/SMB/FUSE report
 *   "locking protocol", "not authorized" or "disk I/O error"), as Hermes does since v2026.5.16. A silent
 *   refusal (the pragma answers another mode) is reported as the mode actually in force.
 * - `synchronous=FULL` by default: in WAL mode NORMAL may lose the last commits on power loss, and this
 *   library's first promise is not to lose data. `synchronous: 'NORMAL'` is an explicit opt-in.
 * - `foreign_keys=ON`, which Hermes relies on (appending to an unknown session fails).
 * - New database files are created with mode 0600: transcripts are private. SQLite gives the -wal and
 *   -shm files the same mode as the database.
 */
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { ConnectionError, StoreNotFoundError, ValidationError } from '../../errors.js';

export type SqliteSynchronous = 'FULL' | 'NORMAL' | 'EXTRA';

export interface SqliteOpenOptions {
  busyTimeoutMs: number;
  synchronous: SqliteSynchronous;
  /** Force a journal mode (e.g. 'DELETE' on a network filesystem) instead of WAL with fallback. */
  journalMode?: 'WAL' | 'DELETE';
  readonly?: boolean;
  /** Open the file only if it exists (readonly implies it): never create it. */
  mustExist?: boolean;
}

const WAL_REFUSAL_MARKERS = ['locking protocol', 'not authorized', 'disk i/o error'];

/**
 * Open the connection and set the per-connection pragmas. The journal mode, which is stored in the file,
 * is left alone here: `applyJournalMode` switches it once the store has accepted the file, so an open that
 * is refused (a foreign database, a failed migration) leaves the file byte for byte as it was.
 */
export function openSqlite(filePath: string, memory: boolean, options: SqliteOpenOptions): Database.Database {
  const where = memory ? 'sqlite::memory:' : `sqlite:${filePath}`;
  const mustExist = !memory && (options.mustExist === true || options.readonly === true);
  if (!memory) {
    const file = path.resolve(filePath);
    if (mustExist && !fs.existsSync(file)) throw new StoreNotFoundError(where, 'MISSING', file, `no such file ${file}`);
    const dir = path.dirname(file);
    if (!fs.existsSync(dir)) throw new ConnectionError(where, `directory ${dir} does not exist`);
    if (!mustExist) createPrivateFile(filePath, where);
  }

  let client: Database.Database;
  try {
    client = new Database(memory ? ':memory:' : filePath, {
      fileMustExist: mustExist,
      readonly: options.readonly === true,
    });
  } catch (error) {
    throw new ConnectionError(where, describe(error), { cause: error });
  }

  try {
    applyConnectionPragmas(client, options);
    return client;
  } catch (error) {
    client.close();
    if (error instanceof ConnectionError) throw error;
    throw new ConnectionError(where, describe(error), { cause: error });
  }
}

/**
 * Use an app's better-sqlite3 connection: the same pragmas as our own connections (busy_timeout, then
 * synchronous unless it is read-only, foreign_keys=ON); the journal mode follows at activation, as for ours.
 * Returns the busy_timeout it had, which the store puts back when it closes (the connection stays open).
 */
export function adoptSqlite(
  client: Database.Database,
  where: string,
  options: Pick<SqliteOpenOptions, 'busyTimeoutMs' | 'synchronous'>,
): number {
  if (!client.open) throw new ConnectionError(where, 'this better-sqlite3 Database is closed');
  if (client.inTransaction) {
    // foreign_keys cannot change inside a transaction, and our writes would join the app's.
    throw new ConnectionError(
      where,
      'this better-sqlite3 Database is inside a transaction; open the store outside one',
    );
  }
  try {
    // Statements prepared on it inherit defaultSafeIntegers: our counters and ids would come back as BigInt.
    if (typeof (client.prepare('SELECT 1 AS one').get() as { one: unknown }).one === 'bigint') {
      throw new ValidationError(
        'target',
        'this better-sqlite3 Database returns integers as BigInt (defaultSafeIntegers(true)); pass one that does not',
      );
    }
    const previousBusyTimeout = Number(client.pragma('busy_timeout', { simple: true }));
    applyConnectionPragmas(client, options);
    return previousBusyTimeout;
  } catch (error) {
    if (error instanceof ValidationError) throw error;
    throw new ConnectionError(where, describe(error), { cause: error });
  }
}

/** The pragmas every connection of a store gets, ours or the app's; the journal mode follows at activation. */
function applyConnectionPragmas(
  client: Database.Database,
  options: Pick<SqliteOpenOptions, 'busyTimeoutMs' | 'synchronous'>,
): void {
  applyBusyTimeout(client, options.busyTimeoutMs);
  // Reading the header proves the file is a database before we change anything in it.
  client.pragma('schema_version', { simple: true });
  if (!client.readonly) client.pragma(`synchronous = ${options.synchronous}`);
  client.pragma('foreign_keys = ON');
}

/** How long one statement waits for a lock inside SQLite (synchronously: it blocks the event loop). */
export function applyBusyTimeout(client: Database.Database, ms: number): void {
  client.pragma(`busy_timeout = ${Math.max(0, Math.trunc(ms))}`);
}

function createPrivateFile(filePath: string, where: string): void {
  try {
    fs.closeSync(fs.openSync(filePath, fs.constants.O_CREAT | fs.constants.O_EXCL | fs.constants.O_WRONLY, 0o600));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return; // an existing database keeps its mode
    throw new ConnectionError(where, describe(error), { cause: error });
  }
}

/** The journal mode in force: 'wal', 'delete', or 'memory' for an in-memory database. */
export function currentJournalMode(client: Database.Database): string {
  return String(client.pragma('journal_mode', { simple: true })).toLowerCase();
}

/** Switch to WAL (or the forced mode) and return the mode in force. Throws SQLITE_BUSY like any write. */
export function applyJournalMode(client: Database.Database, options: Pick<SqliteOpenOptions, 'journalMode'>): string {
  if (client.memory || client.readonly) return currentJournalMode(client);
  if (options.journalMode === 'DELETE') {
    return String(client.pragma('journal_mode = DELETE', { simple: true })).toLowerCase();
  }
  try {
    return String(client.pragma('journal_mode = WAL', { simple: true })).toLowerCase();
  } catch (error) {
    const message = describe(error).toLowerCase();
    if (options.journalMode === 'WAL' || !WAL_REFUSAL_MARKERS.some((m) => message.includes(m))) throw error;
    process.emitWarning(`SQLite refused WAL (${describe(error)}); using journal_mode=DELETE`, {
      code: 'HERMES_SESSIONDB_WAL_FALLBACK',
    });
    return String(client.pragma('journal_mode = DELETE', { simple: true })).toLowerCase();
  }
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
