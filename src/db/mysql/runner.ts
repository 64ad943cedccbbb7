/**
 * How MySQL/MariaDB run operations: awaited on pooled connections, as on Postgres; each write its own transaction,
 * one session's writes in order (lanes), a deadlock victim run again; appendMessage one CALL of the append
 * procedure. The SQL itself: spelling.ts.
 */
import { MySqlDialect as DrizzleMysqlCompiler } from 'drizzle-orm/mysql-core';
import type { PoolConnection, ResultSetHeader } from 'mysql2/promise';
import { DatabaseError, SessionNotFoundError, rethrowAsDatabaseError } from '../../errors.js';
import type { AppendedMessage, Runner, SnapshotRead, WriteOptions } from '../dialect.js';
import { CallGate, type Op, type Query, type Table, WriteLanes } from '../ops.js';
import { APPEND_CALL, appendedId, mysqlAppendParams } from './append.js';
import type { OpenedMysql } from './open.js';

const compiler = new DrizzleMysqlCompiler();

const num = (v: unknown): number => (typeof v === 'number' ? v : Number(v));

const ANALYZE_TABLES =
  'ANALYZE TABLE sessions, messages, session_activity, message_search_blocks, state_meta, telegram_dm_topic_mode, telegram_dm_topic_bindings';

/** Server errors after which a write transaction is run again: a deadlock victim (1213), a lock wait timeout (1205). */
const RETRIED = new Set([1213, 1205]);
const WRITE_ATTEMPTS = 5;
/** A statement with a binary parameter of at least this many bytes (the search index's postings) is prepared. */
const BINARY_PREPARED_BYTES = 2 ** 20;

export class MysqlRunner implements Runner {
  constructor(private readonly opened: OpenedMysql) {}

  /** Run one query of an operation on `c`. */
  private static async run(c: PoolConnection, query: Query, opened: OpenedMysql): Promise<unknown> {
    if (query.mode === 'all') {
      const out: unknown[] = [];
      for (const one of query.sqls) out.push(await MysqlRunner.run(c, { mode: 'rows', sql: one }, opened));
      return out;
    }
    if (query.mode === 'text') {
      await c.query(query.text, query.params as unknown[]);
      return undefined;
    }
    if (query.mode === 'await') return query.promise;
    const compiled = compiler.sqlToQuery(query.sql);
    if (query.mode === 'values' || query.mode === 'table') {
      const [found, fields] = await c.query({ sql: compiled.sql, rowsAsArray: true }, compiled.params);
      const rows = found as unknown[][];
      if (query.mode === 'values') return rows;
      return { columns: (fields ?? []).map((f) => f.name), rows } satisfies Table;
    }
    if (query.mode === 'inserted') {
      if (opened.mariadb) {
        // The rows' own ids, in insertion order, whatever the lock mode and auto_increment_increment.
        const [returned] = await c.query(`${compiled.sql} RETURNING id`, compiled.params);
        return (returned as Array<{ id: unknown }>).map((r) => num(r.id));
      }
      const [result] = await c.query(compiled.sql, compiled.params);
      const header = result as ResultSetHeader;
      if (header.affectedRows <= 1) return header.affectedRows === 0 ? [] : [header.insertId];
      if (opened.autoincLockMode === 2) {
        // Interleaved lock mode: a multi-row insert's ids need not follow each other.
        throw new DatabaseError(
          'innodb_autoinc_lock_mode = 2 does not promise consecutive ids for a multi-row insert; set it to 1',
          null,
        );
      }
      // MySQL: insertId is the first row's id, and the statement's next ids follow it at the session's
      // auto_increment_increment (1 by default, more on a multi-primary cluster), not at 1.
      const [found] = await c.query('SELECT @@SESSION.auto_increment_increment AS step');
      const step = Number((found as Array<{ step: unknown }>)[0]?.step);
      if (!Number.isSafeInteger(step) || step < 1)
        throw new DatabaseError(`unexpected auto_increment_increment ${step}`, null);
      return Array.from({ length: header.affectedRows }, (_, i) => header.insertId + i * step);
    }
    if (query.mode === 'exec' && compiled.params.some((p) => Buffer.isBuffer(p) && p.length >= BINARY_PREPARED_BYTES)) {
      // Sent as a prepared statement: its bytes travel as they are, where query() would write them as hex
      // (twice their size, against max_allowed_packet). Unprepared at once: its text is used once.
      try {
        await c.execute(compiled.sql, compiled.params as Parameters<PoolConnection['execute']>[1]);
      } finally {
        c.unprepare(compiled.sql);
      }
      return undefined;
    }
    const [result] = await c.query(compiled.sql, compiled.params);
    if (query.mode === 'changes') return (result as ResultSetHeader).affectedRows;
    if (query.mode === 'rows') return Array.isArray(result) ? result : [];
    return undefined;
  }

  private async drive<T>(c: PoolConnection, op: Op<T>): Promise<T> {
    let step = op.next();
    while (!step.done) {
      let result: unknown;
      try {
        result = await MysqlRunner.run(c, step.value, this.opened);
      } catch (error) {
        step = op.throw(error);
        continue;
      }
      step = op.next(result);
    }
    return step.value;
  }

  read<T>(op: () => Op<T>): Promise<T> {
    return this.gate.admit(async () => {
      const c = await this.opened.connection().catch(rethrowAsDatabaseError);
      try {
        return await this.drive(c, op()).catch(rethrowAsDatabaseError);
      } finally {
        c.release();
      }
    });
  }

  /**
   * A read-only transaction at REPEATABLE READ on one connection: every read of `body` sees the snapshot taken
   * when it starts (the pool's connections otherwise read committed, each statement its own snapshot).
   */
  snapshot<T>(body: (read: SnapshotRead) => Promise<T>): Promise<T> {
    return this.gate.admit(async () => {
      const c = await this.opened.connection().catch(rethrowAsDatabaseError);
      let broken = false;
      try {
        // SET TRANSACTION (no SESSION) sets the next transaction's level only.
        await c.query('SET TRANSACTION ISOLATION LEVEL REPEATABLE READ').catch(rethrowAsDatabaseError);
        await c.query('START TRANSACTION WITH CONSISTENT SNAPSHOT, READ ONLY').catch(rethrowAsDatabaseError);
        try {
          return await body((op) => this.drive(c, op).catch(rethrowAsDatabaseError));
        } finally {
          await c.query('COMMIT').catch(() => {
            broken = true;
          });
        }
      } finally {
        if (broken) c.destroy();
        else c.release();
      }
    });
  }

  write<T>(op: () => Op<T>, options?: WriteOptions): Promise<T> {
    return this.gate.admit(() => {
      const run = () => this.transaction(op).catch(rethrowAsDatabaseError);
      return options?.barrier ? this.lanes.barrier(run) : this.lanes.run(options?.lane, run);
    });
  }

  /** One transaction on a pooled connection; a deadlock victim runs again (its work was rolled back). */
  private async transaction<T>(op: () => Op<T>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      const c = await this.opened.connection();
      let broken = false;
      try {
        await c.query('START TRANSACTION');
        const result = await this.drive(c, op());
        await c.query('COMMIT');
        return result;
      } catch (error) {
        try {
          await c.query('ROLLBACK');
        } catch {
          broken = true;
        }
        const errno = (error as { errno?: unknown }).errno;
        if (typeof errno === 'number' && RETRIED.has(errno) && attempt < WRITE_ATTEMPTS) continue;
        throw error;
      } finally {
        if (broken) c.destroy();
        else c.release();
      }
    }
  }

  /** One CALL (db/mysql/append.ts) in the session's lane; a deadlock victim is called again. */
  appendMessage(message: AppendedMessage): Promise<number> {
    return this.gate.admit(() => {
      const params = mysqlAppendParams(message);
      return this.lanes.run(message.sessionId, async () => {
        for (let attempt = 1; ; attempt++) {
          const c = await this.opened.connection().catch(rethrowAsDatabaseError);
          let id: number | null;
          try {
            const [result] = await c.query(APPEND_CALL, params);
            id = appendedId(result);
          } catch (error) {
            const errno = (error as { errno?: unknown }).errno;
            if (typeof errno === 'number' && RETRIED.has(errno) && attempt < WRITE_ATTEMPTS) continue;
            rethrowAsDatabaseError(error);
          } finally {
            c.release();
          }
          if (id === null) throw new SessionNotFoundError(message.sessionId);
          return id;
        }
      });
    });
  }

  private readonly gate = new CallGate();
  private readonly lanes = new WriteLanes();

  settle(): Promise<void> {
    return this.gate.shutAndDrain();
  }

  /** A long write is an ordinary one: the server does the work, the event loop only waits. */
  maintain<T>(op: () => Op<T>, options?: WriteOptions): Promise<T> {
    return this.write(op, options);
  }

  async close(): Promise<void> {}

  /**
   * InnoDB recalculates a table's statistics in the background once a tenth of it changed, some time after the
   * load: ANALYZE TABLE has them right when the import returns. It reports a failure as a row, not an error.
   */
  async analyze(): Promise<void> {
    await this.gate.admit(async () => {
      const c = await this.opened.connection().catch(rethrowAsDatabaseError);
      try {
        const [found] = await c.query(ANALYZE_TABLES).catch(rethrowAsDatabaseError);
        const failed = (found as Array<{ Table?: unknown; Msg_type?: unknown; Msg_text?: unknown }>).find(
          (r) => String(r.Msg_type).toLowerCase() === 'error',
        );
        if (failed) throw new DatabaseError(`ANALYZE TABLE ${String(failed.Table)}: ${String(failed.Msg_text)}`, null);
      } finally {
        c.release();
      }
    });
  }

  async vacuum(): Promise<void> {
    await this.gate.admit(async () => {
      const c = await this.opened.connection().catch(rethrowAsDatabaseError);
      try {
        for (const table of ['sessions', 'messages', 'message_search_blocks', 'state_meta'])
          await c.query(`OPTIMIZE TABLE ${table}`).catch(rethrowAsDatabaseError);
      } finally {
        c.release();
      }
    });
  }
}
