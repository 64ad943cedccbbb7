/**
 * How Postgres and PGlite run operations: reads on the pool, each write its own transaction on a pooled
 * connection, one session's writes in order (lanes), appendMessage as one statement with queued appends sent
 * together (append-queue.ts). The SQL itself: spelling.ts.
 */
import { type SQL, sql } from 'drizzle-orm';
import { SessionNotFoundError, rethrowAsDatabaseError } from '../../errors.js';
import type { AppendedMessage, Runner, SnapshotRead, WriteOptions } from '../dialect.js';
import { CallGate, type Op, WriteLanes, insertedIds, tableOfRows } from '../ops.js';
import { AppendQueue } from './append-queue.js';
import { type PgAppendStatements, pgAppendStatements } from './append-statement.js';
import { type PgExecutor, changesOf, rowsOf } from './open.js';
import { PgSpelling } from './spelling.js';

/** What the dialect needs from the backend: queries for reads (on the current pool), and safe transactions for writes. */
export interface PgConnection extends PgExecutor {
  transaction<T>(body: (executor: PgExecutor) => Promise<T>): Promise<T>;
  /** One prepared statement outside a transaction (atomic on its own): its rows. */
  statement(text: string, params: readonly unknown[]): Promise<Array<Record<string, unknown>>>;
}

/**
 * Append statements in flight at once before the next appends wait to go together: two measured best with 16
 * concurrent callers (bench/append.ts), one sending while the next batch forms.
 */
const APPENDS_IN_FLIGHT = 2;

export class PgRunner implements Runner {
  /** `spelling`: its table names are the ones the runner's own statements (append, ANALYZE) use. */
  constructor(
    private readonly conn: PgConnection,
    private readonly spelling: PgSpelling = new PgSpelling(),
  ) {
    const { t } = spelling;
    this.appendStatements = pgAppendStatements(t);
    this.appendQueue = new AppendQueue(conn, this.appendStatements, APPENDS_IN_FLIGHT);
  }

  static async runAsync<T>(executor: PgExecutor, op: Op<T>): Promise<T> {
    let step = op.next();
    while (!step.done) {
      let result: unknown;
      try {
        const query = step.value;
        if (query.mode === 'text')
          throw new TypeError('positional statement text is SQLite-only; Postgres bulk writes send JSON');
        if (query.mode === 'await') {
          result = await query.promise;
        } else if (query.mode === 'all') {
          // Outside a transaction each statement takes its own pooled connection, so they run at once.
          result = (await Promise.all(query.sqls.map((one) => executor.execute(one)))).map((r) => rowsOf(r));
        } else if (query.mode === 'table') {
          result = executor.table
            ? await executor.table(query.sql)
            : tableOfRows(rowsOf<Record<string, unknown>>(await executor.execute(query.sql)));
        } else if (query.mode === 'changes') {
          result = changesOf(await executor.execute(query.sql));
        } else if (query.mode === 'inserted') {
          result = insertedIds(rowsOf(await executor.execute(sql`${query.sql} RETURNING id`)));
        } else if (query.mode === 'values') {
          result = executor.values
            ? await executor.values(query.sql)
            : rowsOf<Record<string, unknown>>(await executor.execute(query.sql)).map((row) => Object.values(row));
        } else {
          result = rowsOf(await executor.execute(query.sql));
        }
      } catch (error) {
        step = op.throw(error);
        continue;
      }
      step = op.next(result);
    }
    return step.value;
  }

  read<T>(op: () => Op<T>): Promise<T> {
    return this.gate.admit(() => PgRunner.runAsync(this.conn, op()).catch(rethrowAsDatabaseError));
  }

  /** A read-only repeatable-read transaction: every read of `body` sees the same snapshot. */
  snapshot<T>(body: (read: SnapshotRead) => Promise<T>): Promise<T> {
    return this.gate.admit(() =>
      this.conn
        .transaction(async (executor) => {
          await executor.execute(sql`SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY`);
          return body((op) => PgRunner.runAsync(executor, op));
        })
        .catch(rethrowAsDatabaseError),
    );
  }

  /**
   * Each write is its own transaction on a pooled connection, so writes run side by side; those of one
   * lane wait for the previous one to settle before they begin (otherwise two appends to one session
   * could take the session's row lock in either order, and commit out of order).
   */
  write<T>(op: () => Op<T>, options?: WriteOptions): Promise<T> {
    return this.gate.admit(() => {
      const run = () =>
        this.conn.transaction((executor) => PgRunner.runAsync(executor, op())).catch(rethrowAsDatabaseError);
      return options?.barrier ? this.lanes.barrier(run) : this.lanes.run(options?.lane, run);
    });
  }

  /**
   * One round trip: the append statement (append-statement.ts) is atomic on its own, so it needs no BEGIN/COMMIT,
   * and appends that queue up go together (append-queue.ts). Parameters are encoded now, before the lane
   * waits; the lane keeps one session's appends in request order.
   */
  appendMessage(message: AppendedMessage): Promise<number> {
    return this.gate.admit(() => {
      const params = this.appendStatements.params(message);
      return this.lanes.run(message.sessionId, async () => {
        let id: unknown;
        try {
          id = await this.appendQueue.append(params);
        } catch (error) {
          rethrowAsDatabaseError(error);
        }
        if (id === undefined) throw new SessionNotFoundError(message.sessionId);
        return this.spelling.decode.int(id);
      });
    });
  }

  private readonly gate = new CallGate();
  private readonly appendStatements: PgAppendStatements;
  private readonly appendQueue: AppendQueue;
  private readonly lanes = new WriteLanes();

  settle(): Promise<void> {
    return this.gate.shutAndDrain();
  }

  /** Postgres never blocks the event loop: a long write is an ordinary one. */
  maintain<T>(op: () => Op<T>, options?: WriteOptions): Promise<T> {
    return this.write(op, options);
  }

  async close(): Promise<void> {}

  /**
   * Without it the planner has no statistics for the rows a bulk load wrote until autovacuum analyzes them,
   * which may be never (autovacuum off; PGlite runs none): a listing then takes a plan many times slower.
   * A table per statement: PGlite runs on this thread.
   */
  async analyze(): Promise<void> {
    const { t } = this.spelling;
    const tables = [
      t.sessions,
      t.messages,
      t.messageSearchBlocks,
      t.messageSearchRecent,
      t.stateMeta,
      t.telegramDmTopicMode,
      t.telegramDmTopicBindings,
    ];
    await this.gate.admit(async () => {
      for (const table of tables) await this.conn.execute(sql`ANALYZE ${table}`).catch(rethrowAsDatabaseError);
    });
  }

  async vacuum(): Promise<void> {
    await this.gate.admit(() => this.conn.execute(sql`VACUUM ANALYZE`).catch(rethrowAsDatabaseError));
  }

  async vacuumTables(tables: readonly SQL[]): Promise<void> {
    if (tables.length === 0) return;
    await this.gate.admit(() =>
      this.conn.execute(sql`VACUUM (ANALYZE) ${sql.join([...tables], sql`, `)}`).catch(rethrowAsDatabaseError),
    );
  }
}
