/**
 * Long SQLite work off the event loop. better-sqlite3 is synchronous: deleting a 20,000-message session or
 * a VACUUM of a large file would stop every chat the process serves for a second or more. A worker thread
 * with its own connection to the same file runs such statements; the main thread only awaits them, and
 * keeps serving (its own writes wait for the lock asynchronously). One transaction at a time: the caller
 * (SqliteDialect.maintain) queues them.
 *
 * The worker's code is inline (an eval worker) so that it loads the same way from TypeScript sources under
 * a test runner and from the compiled package.
 */
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import { StoreClosedError } from '../../errors.js';

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
type Pending = { resolve: (value: unknown) => void; reject: (error: unknown) => void };
type Message =
  | { kind: 'statement'; text: string; params: readonly unknown[]; rows: StatementResult }
  | { kind: 'script'; text: string }
  | { kind: 'snapshot'; destination: string; pagesPerStep: number };

/**
 * The parent's node options for the worker, without --input-type: it describes the parent's own `-e` text,
 * and an app started with `node --input-type=module -e …` would make our CommonJS source an ES module
 * ("require is not defined"). Everything else (loaders, --require, limits) is inherited as by default.
 */
export function workerExecArgv(parent: readonly string[]): string[] {
  const kept: string[] = [];
  for (let i = 0; i < parent.length; i++) {
    if (parent[i] === '--input-type') i++;
    else if (!parent[i]!.startsWith('--input-type=')) kept.push(parent[i]!);
  }
  return kept;
}

export class SqliteWorker {
  private readonly worker: Worker;
  private readonly pending = new Map<number, Pending>();
  private next = 0;
  private failure: Error | null = null;

  constructor(options: SqliteWorkerOptions) {
    const driver = createRequire(import.meta.url).resolve('better-sqlite3');
    this.worker = new Worker(WORKER_SOURCE, {
      eval: true,
      execArgv: workerExecArgv(process.execArgv),
      workerData: { ...options, driver },
    });
    // An idle worker must not keep the process alive; close() ends it.
    this.worker.unref();
    this.worker.on(
      'message',
      (m: { id: number; ok: boolean; result?: unknown; error?: { message: string; code?: string } }) => {
        const p = this.pending.get(m.id);
        if (!p) return;
        this.pending.delete(m.id);
        if (m.ok) p.resolve(m.result);
        else p.reject(new SqliteWorkerError(m.error?.message ?? 'unknown error', m.error?.code));
      },
    );
    const fail = (error: Error) => {
      this.failure = error;
      for (const p of this.pending.values()) p.reject(error);
      this.pending.clear();
    };
    this.worker.on('error', fail);
    this.worker.on('exit', () => fail(new StoreClosedError()));
  }

  private send(message: Message | { kind: 'close' }): Promise<unknown> {
    if (this.failure) return Promise.reject(this.failure);
    return new Promise((resolve, reject) => {
      const id = this.next++;
      this.pending.set(id, { resolve, reject });
      this.worker.ref(); // busy: keep the process alive until the answer arrives
      this.worker.postMessage({ id, ...message });
    }).finally(() => {
      if (this.pending.size === 0) this.worker.unref();
    });
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
    if (this.failure) return;
    await this.send({ kind: 'close' }).catch(() => {});
    // Referenced until the thread has exited: an unreferenced worker's terminate() does not keep the process
    // alive, and a caller awaiting close() as its last step would see the process end first (exit code 13).
    this.worker.ref();
    await this.worker.terminate();
  }
}
