/**
 * Long SQLite work off the event loop. better-sqlite3 is synchronous: deleting a 20,000-message session or
 * a VACUUM of a large file would stop every chat the process serves for a second or more. A worker thread
 * with its own connection to the same file runs such statements; the main thread only awaits them, and
 * keeps serving (its own writes wait for the lock asynchronously). One transaction at a time: the caller
 * (SqliteRunner.maintain) queues them.
 */
import { createRequire } from 'node:module';
import { StoreClosedError } from '../../errors.js';
import { RequestThread } from '../request-thread.js';

const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
const db = new Database(workerData.file, { fileMustExist: true, readonly: workerData.readonly === true });
db.pragma('busy_timeout = ' + workerData.busyTimeoutMs);
if (workerData.readonly !== true) db.pragma('synchronous = ' + workerData.synchronous);
db.pragma('foreign_keys = ON');
const statements = new Map();
function statement(text) {
  let s = statements.get(text);
  if (!s) {
    s = db.prepare(text);
    statements.set(text, s);
    if (statements.size > 100) statements.delete(statements.keys().next().value);
  }
  return s;
}
parentPort.on('message', async (m) => {
  if (m.kind === 'snapshot') {
    // One read transaction across every step: each step sees the same snapshot, so a writer next door can
    // neither tear the copy nor make the backup start over.
    try {
      db.exec('BEGIN');
      db.prepare('SELECT COUNT(*) FROM sqlite_master').get();
      await db.backup(m.destination, { progress: () => m.pagesPerStep });
      db.exec('COMMIT');
      parentPort.postMessage({ id: m.id, ok: true });
    } catch (e) {
      try { if (db.inTransaction) db.exec('ROLLBACK'); } catch {}
      parentPort.postMessage({ id: m.id, ok: false, error: { name: e && e.name, message: String(e && e.message), code: e && e.code } });
    }
    return;
  }
  if (m.kind === 'close') {
    try { if (db.inTransaction) db.exec('ROLLBACK'); } catch {}
    db.close();
    parentPort.postMessage({ id: m.id, ok: true });
    parentPort.close();
    return;
  }
  try {
    let result;
    if (m.kind === 'script') db.exec(m.text);
    else {
      const s = statement(m.text);
      if (m.rows === 'changes') result = s.run(...m.params).changes;
      else if (m.rows && s.reader) result = s.raw(m.rows === 'values').all(...m.params);
      else { s.run(...m.params); result = m.rows ? [] : undefined; }
    }
    parentPort.postMessage({ id: m.id, ok: true, result });
  } catch (e) {
    parentPort.postMessage({ id: m.id, ok: false, error: { name: e && e.name, message: String(e && e.message), code: e && e.code } });
  }
});
`;

/** An SQLite error raised in the worker, with better-sqlite3's `code` (SQLITE_BUSY, SQLITE_CONSTRAINT_…). */
export class SqliteWorkerError extends Error {
  readonly code: string | undefined;
  constructor(message: string, code: string | undefined) {
    super(message);
    this.name = 'SqliteError';
    this.code = code;
  }
}

export interface SqliteWorkerOptions {
  file: string;
  /** Open the file read-only (a snapshot source that another process may be writing). */
  readonly?: boolean;
  /** How long a worker statement waits for the lock: it blocks only the worker. */
  busyTimeoutMs: number;
  synchronous: string;
}

/**
 * What a statement answers: nothing (false), rows as objects (true), rows as arrays of values ('values'), or
 * the number of rows a write matched ('changes').
 */
type StatementResult = boolean | 'values' | 'changes';
type Message =
  | { kind: 'statement'; text: string; params: readonly unknown[]; rows: StatementResult }
  | { kind: 'script'; text: string }
  | { kind: 'snapshot'; destination: string; pagesPerStep: number };

export class SqliteWorker {
  private readonly thread: RequestThread<Message | { kind: 'close' }>;

  constructor(options: SqliteWorkerOptions) {
    const driver = createRequire(import.meta.url).resolve('better-sqlite3');
    this.thread = new RequestThread({
      source: WORKER_SOURCE,
      workerData: { ...options, driver },
      decodeError: (error) => {
        const e = error as { message?: string; code?: string } | undefined;
        return new SqliteWorkerError(e?.message ?? 'unknown error', e?.code);
      },
      failed: (cause) => cause ?? new StoreClosedError(),
    });
  }

  private send(message: Message | { kind: 'close' }): Promise<unknown> {
    return this.thread.send(message);
  }

  /** Run one prepared statement; rows when `rows` is set (as arrays of values when it is 'values'), or its change count. */
  statement(text: string, params: readonly unknown[], rows: StatementResult): Promise<unknown> {
    return this.send({ kind: 'statement', text, params, rows });
  }

  /** Run statement text without parameters (BEGIN, COMMIT, VACUUM, pragmas). */
  script(text: string): Promise<void> {
    return this.send({ kind: 'script', text }) as Promise<void>;
  }

  /** Copy the database to `destination` with SQLite's online backup, as one consistent snapshot. */
  snapshot(destination: string, pagesPerStep: number): Promise<void> {
    return this.send({ kind: 'snapshot', destination, pagesPerStep }) as Promise<void>;
  }

  /** Close the worker's connection (rolling back anything open) and end the thread. */
  async close(): Promise<void> {
    if (this.thread.failed) return;
    await this.send({ kind: 'close' }).catch(() => {});
    await this.thread.terminate();
  }
}
