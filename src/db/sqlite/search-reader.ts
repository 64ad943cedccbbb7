/**
 * Search reads off the event loop. A search's cost is decided by its query: at the 2,048-character cap, an
 * OR of hundreds of common words, prefixes or substrings makes FTS5 (or the short-CJK LIKE scan) work for
 * seconds inside one statement, and better-sqlite3 would block the process for all of it. A read-only
 * worker thread with its own connection runs those statements instead, one read transaction per operation,
 * so each operation sees one snapshot; the main thread only awaits the rows. It is not the maintenance
 * worker: a long search must not hold up a prune, nor a prune a search.
 */
import { DatabaseError, StoreBusyError } from '../../errors.js';
import { type Op, type Query, type Row, driveAsync, tableOfRows } from '../ops.js';
import { isSqliteBusy } from './busy.js';
import { compileSqlite } from './compile.js';
import { SqliteWorker } from './worker.js';

export class SqliteSearchReader {
  private worker: SqliteWorker | null = null;
  /** Read transactions take turns: the worker's connection holds one at a time. */
  private tail: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly file: string,
    private readonly busyTimeoutMs: number,
  ) {}

  /** Run a read-only operation in one read transaction on the worker's connection. */
  read<T>(op: () => Op<T>): Promise<T> {
    const turn = this.tail.then(() => this.run(op));
    this.tail = turn.catch(() => {});
    return turn;
  }

  private async run<T>(op: () => Op<T>): Promise<T> {
    this.worker ??= new SqliteWorker({
      file: this.file,
      readonly: true,
      busyTimeoutMs: this.busyTimeoutMs,
      synchronous: 'FULL',
    });
    const worker = this.worker;
    await worker.script('BEGIN').catch(fail(this.busyTimeoutMs));
    try {
      const value = await driveAsync(op(), (query) => runRead(worker, query));
      await worker.script('COMMIT');
      return value;
    } catch (error) {
      await worker.script('ROLLBACK').catch(() => {});
      return fail(this.busyTimeoutMs)(error);
    }
  }

  /** End the worker (after the store's calls have settled). */
  async close(): Promise<void> {
    const worker = this.worker;
    this.worker = null;
    await worker?.close();
  }
}

const fail =
  (busyTimeoutMs: number) =>
  (error: unknown): never => {
    throw isSqliteBusy(error) ? new StoreBusyError(busyTimeoutMs, { cause: error }) : DatabaseError.from(error);
  };

async function runRead(worker: SqliteWorker, query: Query): Promise<unknown> {
  if (query.mode === 'all') {
    const out: unknown[] = [];
    for (const one of query.sqls) out.push(await runRead(worker, { mode: 'rows', sql: one }));
    return out;
  }
  if (query.mode === 'rows' || query.mode === 'values' || query.mode === 'table') {
    const { sql: text, params } = compileSqlite(query.sql);
    if (query.mode === 'values') return worker.statement(text, params, 'values');
    const found = (await worker.statement(text, params, true)) as Row[];
    return query.mode === 'table' ? tableOfRows(found) : found;
  }
  throw new DatabaseError(`a search read cannot run a ${query.mode} statement`, null);
}
