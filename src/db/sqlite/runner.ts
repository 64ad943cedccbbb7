/**
 * How SQLite runs operations. Queries compile through compile.ts (Drizzle's compiler is the reference) and run as
 * cached better-sqlite3 prepared statements; operations run synchronously inside one transaction; writes go through
 * one ordered queue with group commit, long ones to the maintenance worker. The SQL itself: spelling.ts.
 */
import type { Database, Statement, Transaction } from 'better-sqlite3';
import type { AppendedMessage, Runner, Spelling, WriteOptions } from '../dialect.js';
import {
  CallGate,
  driveAsync,
  type Op,
  type Query,
  RETURNING_ID,
  type Row,
  type Table,
  insertedIds,
  tableOfRows,
} from '../ops.js';
import { immediateOnce, immediateTransaction, isSqliteBusy, retryWhileBusy } from './busy.js';
import { DatabaseError, StoreBusyError, rethrowAsDatabaseError } from '../../errors.js';
import { compileSqlite } from './compile.js';
import { SqliteAppender } from './append.js';
import { SqliteWorker } from './worker.js';
import { SqliteSearchReader } from './search-reader.js';
import { SqliteSpelling } from './spelling.js';

const SYNCHRONOUS = ['OFF', 'NORMAL', 'FULL', 'EXTRA'];
const pause = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
const STATEMENT_CACHE_SIZE = 200;

/**
 * A write waiting for its turn, and its caller's promise: a synchronous body (`run`), batched with its
 * neighbours, or a job for the maintenance worker (`remote`), which runs alone: the writes before it have
 * committed when it starts, and the writes after it start once it has settled.
 */
type QueuedWrite = {
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
} & ({ run: () => unknown; remote?: undefined } | { run?: undefined; remote: () => Promise<unknown> });
type SyncWrite = QueuedWrite & { run: () => unknown };
type Outcome = { ok: true; value: unknown } | { ok: false; error: unknown };

export class SqliteRunner implements Runner {
  private readonly statements = new Map<string, Statement>();

  constructor(
    private readonly client: Database,
    private readonly writeDeadlineMs: number,
    spelling: Spelling = new SqliteSpelling(),
  ) {
    this.appender = new SqliteAppender(client, spelling);
  }

  private statement(text: string): Statement {
    let stmt = this.statements.get(text);
    if (stmt) {
      // Refresh recency for the LRU.
      this.statements.delete(text);
      this.statements.set(text, stmt);
      return stmt;
    }
    stmt = this.client.prepare(text);
    this.statements.set(text, stmt);
    if (this.statements.size > STATEMENT_CACHE_SIZE) {
      this.statements.delete(this.statements.keys().next().value as string);
    }
    return stmt;
  }

  private readonly columnNames = new WeakMap<Statement, readonly string[]>();

  /**
   * A statement's column names, read once (better-sqlite3 builds an object per column each time). SQLite
   * prepares a statement again when the schema changes, so `s.*` may gain columns: then they are read again.
   */
  private columnsOf(stmt: Statement, row: readonly unknown[] | undefined): readonly string[] {
    let names = this.columnNames.get(stmt);
    if (!names || (row && row.length !== names.length)) {
      names = stmt.columns().map((c) => c.name);
      this.columnNames.set(stmt, names);
    }
    return names;
  }

  private runQuery(query: Query): unknown {
    if (query.mode === 'all') return query.sqls.map((one) => this.runQuery({ mode: 'rows', sql: one }));
    if (query.mode === 'await')
      throw new TypeError('an operation awaited a promise: SQLite runs operations synchronously');
    if (query.mode === 'text') {
      this.statement(query.text).run(...query.params);
      return undefined;
    }
    const { sql: text, params } = compileSqlite(query.sql);
    if (query.mode === 'inserted') return insertedIds(this.statement(text + RETURNING_ID).all(...params) as Row[]);
    const stmt = this.statement(text);
    if (query.mode === 'changes') return stmt.run(...params).changes;
    if (query.mode === 'values' || query.mode === 'table') {
      // Raw mode is a flag of the (cached, shared) statement: set for this call only.
      stmt.raw(true);
      let found: unknown[][];
      try {
        found = stmt.all(...params) as unknown[][];
      } finally {
        stmt.raw(false);
      }
      return query.mode === 'values'
        ? found
        : ({ columns: this.columnsOf(stmt, found[0]), rows: found } satisfies Table);
    }
    if (query.mode === 'rows') {
      if (stmt.reader) return stmt.all(...params);
      stmt.run(...params);
      return [];
    }
    stmt.run(...params);
    return undefined;
  }

  /** Drive an operation to completion, synchronously. Errors are thrown into the operation. */
  runSync<T>(op: Op<T>): T {
    let step = op.next();
    while (!step.done) {
      let result: unknown;
      try {
        result = this.runQuery(step.value);
      } catch (error) {
        step = op.throw(error);
        continue;
      }
      step = op.next(result);
    }
    return step.value;
  }

  /** A read's transaction, made once (better-sqlite3 builds several wrappers per transaction() call). */
  private readTransactionOnce: Transaction<(op: () => Op<unknown>) => unknown> | undefined;
  private get readTransaction() {
    this.readTransactionOnce ??= this.client.transaction((op: () => Op<unknown>) => this.runSync(op()));
    return this.readTransactionOnce;
  }

  read<T>(op: () => Op<T>): Promise<T> {
    return this.gate.admit(() => {
      const run = this.readTransaction;
      return retryWhileBusy(() => run.deferred(op) as T, { deadlineMs: this.writeDeadlineMs }).catch(
        rethrowAsDatabaseError,
      );
    });
  }

  /**
   * Group commit: writes requested in the same turn of the event loop (a gateway serving several chats)
   * share one `BEGIN IMMEDIATE … COMMIT`, so they share one fsync. Each call runs inside its own
   * SAVEPOINT (added only when a call in the batch fails: the batch is then run again from the start): one
   * that fails is rolled back alone and rejects alone; every call's promise settles only after the shared
   * COMMIT. A lone call runs exactly as before, in its own transaction. One batch at a time: writes
   * requested while a batch waits for the lock (another process writing) form the next batch, so writes
   * commit in the order they were requested.
   */
  write<T>(op: () => Op<T>): Promise<T> {
    return this.enqueue(() => this.runSync(op()));
  }

  /** A write's synchronous body joins the next batch (see write()). */
  private enqueue<T>(run: () => T): Promise<T> {
    return this.gate.admit(
      () =>
        new Promise<T>((resolve, reject) => {
          this.push({ run, resolve: resolve as (value: unknown) => void, reject });
        }),
    );
  }

  /** A worker job takes its turn in the same queue as every other write (see QueuedWrite). */
  private enqueueRemote<T>(remote: () => Promise<T>): Promise<T> {
    return this.gate.admit(
      () =>
        new Promise<T>((resolve, reject) => {
          this.remoteQueued++;
          this.push({ remote, resolve: resolve as (value: unknown) => void, reject });
        }),
    );
  }

  private push(write: QueuedWrite): void {
    this.queued.push(write);
    if (this.queued.length === 1 && !this.flushing) setImmediate(this.flushNextBound);
  }

  private readonly appender: SqliteAppender;

  /** The hot path (append.ts): appendMessageOp's statements, prepared once, in the same group commit. */
  appendMessage(message: AppendedMessage): Promise<number> {
    const params = this.appender.params(message);
    return this.enqueue(() => this.appender.run(params));
  }

  /**
   * A long write (deletes of big sessions, prune batches, bulk imports) in one transaction, run by a worker
   * thread on its own connection so the event loop stays free. In-memory and read-only databases have no
   * second connection: there it is an ordinary write. Maintenance transactions run one at a time.
   */
  maintain<T>(op: () => Op<T>, options?: WriteOptions): Promise<T> {
    const worker = this.maintenanceWorker();
    // SQLite commits every write in request order, the worker's too: lanes need nothing here.
    void options;
    if (!worker) return this.write(op);
    return this.enqueueRemote(() => this.runInWorker(worker, op));
  }

  private worker: SqliteWorker | null | undefined;

  private maintenanceWorker(): SqliteWorker | null {
    if (this.worker === undefined) {
      this.worker =
        this.client.memory || this.client.readonly
          ? null
          : new SqliteWorker({
              file: this.client.name,
              // The worker may wait for the lock as long as a write may: only the worker waits.
              busyTimeoutMs: this.writeDeadlineMs,
              synchronous: SYNCHRONOUS[Number(this.client.pragma('synchronous', { simple: true }))] ?? 'FULL',
            });
    }
    return this.worker;
  }

  private async runInWorker<T>(worker: SqliteWorker, op: () => Op<T>): Promise<T> {
    try {
      await worker.script('BEGIN IMMEDIATE');
    } catch (error) {
      throw isSqliteBusy(error)
        ? new StoreBusyError(this.writeDeadlineMs, { cause: error })
        : DatabaseError.from(error);
    }
    try {
      const value = await driveAsync(op(), (query) => this.runRemote(worker, query));
      await worker.script('COMMIT');
      return value;
    } catch (error) {
      await worker.script('ROLLBACK').catch(() => {});
      throw DatabaseError.from(error);
    }
  }

  private async runRemote(worker: SqliteWorker, query: Query): Promise<unknown> {
    if (query.mode === 'all') {
      const out: unknown[] = [];
      for (const one of query.sqls) out.push(await this.runRemote(worker, { mode: 'rows', sql: one }));
      return out;
    }
    if (query.mode === 'text') return worker.statement(query.text, query.params, false);
    if (query.mode === 'await')
      throw new TypeError('an operation awaited a promise: SQLite runs operations synchronously');
    const { sql: text, params } = compileSqlite(query.sql);
    if (query.mode === 'inserted')
      return insertedIds((await worker.statement(text + RETURNING_ID, params, true)) as Row[]);
    if (query.mode === 'changes') return worker.statement(text, params, 'changes');
    if (query.mode === 'values') return worker.statement(text, params, 'values');
    if (query.mode === 'table') return tableOfRows((await worker.statement(text, params, true)) as Row[]);
    return worker.statement(text, params, query.mode === 'rows');
  }

  private searchReader: SqliteSearchReader | null | undefined;

  /**
   * A read whose cost the caller's input decides (a search statement), run off the event loop: on a file
   * by a read-only worker thread (search-reader.ts). An in-memory database has no second connection: read().
   */
  readOffLoop<T>(op: () => Op<T>): Promise<T> {
    this.searchReader ??= this.client.memory ? null : new SqliteSearchReader(this.client.name, this.writeDeadlineMs);
    const reader = this.searchReader;
    if (!reader) return this.read(op);
    return this.gate.admit(() => reader.read(op));
  }

  /** End the maintenance worker (after settle()). */
  async close(): Promise<void> {
    const worker = this.worker;
    this.worker = null;
    await worker?.close();
    const reader = this.searchReader;
    this.searchReader = null;
    await reader?.close();
  }

  private readonly gate = new CallGate();
  private queued: QueuedWrite[] = [];
  /** How many of the queued writes are worker jobs (none, usually: then the whole queue is one batch). */
  private remoteQueued = 0;
  /** The batch or worker job being written, if any; the next one starts when it has settled. */
  private flushing: Promise<void> | undefined;

  private readonly flushNextBound = () => this.flushNext();
  private readonly afterWaiting = () => {
    this.flushing = undefined;
    this.flushNext();
  };

  private flushNext(): void {
    while (!this.flushing && this.queued.length > 0) {
      const head = this.queued[0]!;
      let waiting: Promise<void> | undefined;
      if (head.remote) {
        this.queued.shift();
        this.remoteQueued--;
        waiting = head.remote().then(head.resolve, head.reject);
      } else {
        waiting = this.flushNow(this.takeBatch());
      }
      if (waiting) {
        this.flushing = waiting;
        waiting.then(this.afterWaiting, this.afterWaiting);
      }
    }
  }

  /** The synchronous writes at the head of the queue, up to the first worker job. */
  private takeBatch(): SyncWrite[] {
    let end = this.queued.length;
    if (this.remoteQueued > 0) end = this.queued.findIndex((w) => w.remote !== undefined);
    const batch = end === this.queued.length ? this.queued : this.queued.slice(0, end);
    this.queued = end === this.queued.length ? [] : this.queued.slice(end);
    return batch as SyncWrite[];
  }

  async settle(): Promise<void> {
    await this.gate.shutAndDrain();
    while (this.flushing) await this.flushing.catch(() => {});
  }

  /**
   * Write a batch now, in this turn: when no other connection holds the write lock (the usual case) that
   * takes no promise or timer beyond each call's own. Only when the lock is busy does the batch start over
   * on the waiting path (flushWaiting), and the next batch waits for it.
   */
  private flushNow(batch: SyncWrite[]): Promise<void> | undefined {
    try {
      if (batch.length === 1) {
        const call = batch[0]!;
        let value: unknown;
        try {
          value = immediateOnce(this.client, call.run);
        } catch (error) {
          if (isSqliteBusy(error)) throw error;
          call.reject(DatabaseError.from(error));
          return undefined;
        }
        call.resolve(value);
        return undefined;
      }
      const { outcomes, plain, isolated } = this.batchBodies(batch);
      try {
        immediateOnce(this.client, plain);
      } catch (error) {
        if (isSqliteBusy(error)) throw error;
        immediateOnce(this.client, isolated);
      }
      this.settleBatch(batch, outcomes);
      return undefined;
    } catch (error) {
      // The try above already waited busy_timeout: pause before the waiting path tries again, so the loop
      // is blocked once per attempt, as on that path.
      if (isSqliteBusy(error)) return pause(1).then(() => this.flushWaiting(batch));
      // Nothing was committed: every call fails (settling a promise twice does nothing).
      for (const call of batch) call.reject(DatabaseError.from(error));
      return undefined;
    }
  }

  /** The batch once the write lock was busy: the same, retried while busy until the write deadline. */
  private async flushWaiting(batch: SyncWrite[]): Promise<void> {
    const options = { deadlineMs: this.writeDeadlineMs };
    if (batch.length === 1) {
      const [call] = batch;
      await immediateTransaction(this.client, call!.run, options).then(call!.resolve, (e: unknown) =>
        call!.reject(DatabaseError.from(e)),
      );
      return;
    }
    const { outcomes, plain, isolated } = this.batchBodies(batch);
    try {
      try {
        await immediateTransaction(this.client, plain, options);
      } catch (error) {
        if (error instanceof StoreBusyError) throw error;
        await immediateTransaction(this.client, isolated, options);
      }
    } catch (error) {
      for (const call of batch) call.reject(DatabaseError.from(error));
      return;
    }
    this.settleBatch(batch, outcomes);
  }

  /**
   * A batch's transaction bodies. First every call plainly, in one transaction; only when one of them fails
   * is the batch run again from the start with a SAVEPOINT around each call (savepoints cost about a third
   * of a batched append). Each body starts its outcomes afresh: a retry after SQLITE_BUSY runs every call again.
   */
  private batchBodies(batch: SyncWrite[]) {
    const outcomes: Outcome[] = [];
    const plain = () => {
      outcomes.length = 0;
      for (const call of batch) outcomes.push({ ok: true, value: call.run() });
    };
    const isolated = () => {
      outcomes.length = 0;
      for (const call of batch) {
        this.statement('SAVEPOINT hsdb_call').run();
        try {
          outcomes.push({ ok: true, value: call.run() });
          this.statement('RELEASE hsdb_call').run();
        } catch (error) {
          if (isSqliteBusy(error)) throw error;
          this.statement('ROLLBACK TO hsdb_call').run();
          this.statement('RELEASE hsdb_call').run();
          outcomes.push({ ok: false, error });
        }
      }
    };
    return { outcomes, plain, isolated };
  }

  /** After the COMMIT: each call settles with its own outcome. */
  private settleBatch(batch: SyncWrite[], outcomes: Outcome[]): void {
    batch.forEach((call, i) => {
      const outcome = outcomes[i]!;
      if (outcome.ok) call.resolve(outcome.value);
      else call.reject(DatabaseError.from(outcome.error));
    });
  }

  /**
   * Nothing: SQLite's planner picks our indexes without sqlite_stat1, and the file is Hermes' own, whose queries
   * would plan differently with statistics it never gathers itself.
   */
  async analyze(): Promise<void> {}

  async vacuum(): Promise<void> {
    const worker = this.maintenanceWorker();
    if (worker) {
      // VACUUM rewrites the whole file (seconds for a large one): the worker does it, the event loop runs on.
      await this.enqueueRemote(() =>
        worker
          .script('PRAGMA wal_checkpoint(TRUNCATE)')
          .then(() => worker.script('VACUUM'))
          .catch((error: unknown) => {
            throw isSqliteBusy(error)
              ? new StoreBusyError(this.writeDeadlineMs, { cause: error })
              : DatabaseError.from(error);
          }),
      );
      return;
    }
    const vacuum = () => {
      // A reader holding the WAL makes the checkpoint report "busy" rather than fail; VACUUM runs anyway.
      this.client.pragma('wal_checkpoint(TRUNCATE)');
      this.client.exec('VACUUM');
    };
    await this.gate.admit(() =>
      retryWhileBusy(vacuum, { deadlineMs: this.writeDeadlineMs }).catch(rethrowAsDatabaseError),
    );
  }
}
