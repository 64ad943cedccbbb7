/**
 * How repositories talk to the database without knowing which one it is.
 *
 * A repository operation is a generator that yields queries and receives their rows. The SQLite runner
 * drives it synchronously inside one better-sqlite3 transaction (which cannot survive an `await`); the
 * Postgres runner drives it with `await` inside one async transaction. So each operation is written once,
 * is truly synchronous on SQLite, and does no work between queries that could have happened before the
 * transaction began (encoding and validation happen before the operation is built).
 */
import type { SQL } from 'drizzle-orm';
import { StoreClosedError } from '../errors.js';

export type Query =
  /** `values`: each row as an array in select-list order, which skips building an object per row (long reads). */
  | { readonly mode: 'rows' | 'exec' | 'values' | 'table'; readonly sql: SQL }
  /** `changes`: how many rows an UPDATE or DELETE matched; `inserted`: the ids an INSERT generated, ascending. */
  | { readonly mode: 'changes' | 'inserted'; readonly sql: SQL }
  /** Independent reads whose rows are all needed: Postgres runs them side by side on the pool, SQLite in turn. */
  | { readonly mode: 'all'; readonly sqls: readonly SQL[] }
  /** Statement text with positional parameters, which only the SQLite dialect's bulkInsert yields. */
  | { readonly mode: 'text'; readonly text: string; readonly params: readonly unknown[] }
  /**
   * Wait for work off the event loop (a worker thread) between statements of the same transaction. Only the
   * asynchronous runners (Postgres, MySQL) take it; SQLite's transaction cannot outlive a synchronous call.
   */
  | { readonly mode: 'await'; readonly promise: Promise<unknown> };
export type Op<T> = Generator<Query, T, unknown>;
export type Row = Record<string, unknown>;
/** Rows as arrays of values with the select list's column names (see ops.table). */
export interface Table {
  readonly columns: readonly string[];
  readonly rows: unknown[][];
}

/** Run a query and receive its rows (a write's rows: see `changes` and `inserted`, which every dialect has). */
export function* rows<R = Row>(query: SQL): Op<R[]> {
  return (yield { mode: 'rows', sql: query }) as R[];
}

/**
 * Run a query and receive each row as an array of its values, in select-list order. For reads of many rows:
 * the drivers build a keyed object per row far more slowly than an array (better-sqlite3: about half the
 * cost of reading 1,000 messages), so the caller turns the arrays into rows with a fixed shape itself.
 */
export function* values(query: SQL): Op<unknown[][]> {
  return (yield { mode: 'values', sql: query }) as unknown[][];
}

/**
 * Like `values`, with the column names in select-list order: for a select list the SQL does not spell out
 * (`s.*`), so the caller finds each column's position once instead of the driver keying every row.
 */
export function* table(query: SQL): Op<Table> {
  return (yield { mode: 'table', sql: query }) as Table;
}

/** A keyed row result as a Table (a driver that only answers keyed rows; rows without duplicate names). */
export function tableOfRows(found: readonly Row[]): Table {
  const first = found[0];
  return { columns: first ? Object.keys(first) : [], rows: found.map((r) => Object.values(r)) };
}

/**
 * Run an UPDATE or DELETE and receive how many rows its WHERE matched, whether or not their values changed
 * (SQLite's changes(), Postgres' row count, MySQL's found rows). Instead of `RETURNING`, which MariaDB's
 * UPDATE lacks: what lets claimHandoff stay one compare-and-set on every dialect.
 */
export function* changes(query: SQL): Op<number> {
  return (yield { mode: 'changes', sql: query }) as number;
}

/**
 * Run an INSERT into a table whose `id` the database generates, and receive the generated ids in ascending
 * order (within one statement they follow the rows' order). SQLite and Postgres add `RETURNING id`; MySQL
 * reads the first id and the row count.
 */
export function* inserted(query: SQL): Op<number[]> {
  return (yield { mode: 'inserted', sql: query }) as number[];
}

/** What SQLite appends to an `inserted` statement's text (Postgres: the same, to its SQL). */
export const RETURNING_ID = ' RETURNING id';
/** The ids of an `inserted` statement's RETURNING rows, ascending (int8 arrives as a string from postgres.js). */
export function insertedIds(returned: readonly Row[]): number[] {
  return returned.map((r) => Number(r.id)).sort((a, b) => a - b);
}

/** Run independent reads at once (each on its own pooled connection where the backend has them); rows of each, in order. */
export function* allRows(queries: readonly SQL[]): Op<Row[][]> {
  return (yield { mode: 'all', sqls: queries }) as Row[][];
}

/** The first row, or undefined. */
export function* first<R = Row>(query: SQL): Op<R | undefined> {
  return (yield* rows<R>(query))[0];
}

/**
 * Run statement text with positional parameters. For bulk writes only: building Drizzle SQL objects for
 * thousands of rows costs more than writing them (see Spelling.bulkInsert).
 */
export function* execText(text: string, params: readonly unknown[]): Op<void> {
  yield { mode: 'text', text, params };
}

/** Drive an operation with `run` answering each query asynchronously; a query's error is thrown into the operation. */
export async function driveAsync<T>(op: Op<T>, run: (query: Query) => Promise<unknown>): Promise<T> {
  let step = op.next();
  while (!step.done) {
    let result: unknown;
    try {
      result = await run(step.value);
    } catch (error) {
      step = op.throw(error);
      continue;
    }
    step = op.next(result);
  }
  return step.value;
}

/** Wait for `promise` inside an operation (asynchronous runners only: see Query's `await`). */
export function* awaitOp<T>(promise: Promise<T>): Op<T> {
  return (yield { mode: 'await', promise }) as T;
}

/** Run a statement whose result is not needed. */
export function* exec(query: SQL): Op<void> {
  yield { mode: 'exec', sql: query };
}

/**
 * Admits calls until it is shut, and knows when every admitted call has settled: what lets `close()` wait
 * for calls already made while refusing new ones.
 */
export class CallGate {
  private readonly running = new Set<Promise<unknown>>();
  private shut = false;

  get isShut(): boolean {
    return this.shut;
  }

  /** Start a call (synchronously, so calls start in the order they were made), or refuse it once shut. */
  admit<T>(start: () => Promise<T>): Promise<T> {
    if (this.shut) return Promise.reject(new StoreClosedError());
    let call: Promise<T>;
    try {
      call = start();
    } catch (error) {
      return Promise.reject(error);
    }
    this.running.add(call);
    const forget = () => void this.running.delete(call);
    call.then(forget, forget);
    return call;
  }

  /**
   * Count a call that has already started (its promise) as admitted: close() waits for it. Once shut, the call
   * is left to the gates below (it was made after close() began).
   */
  track<T>(result: T): T {
    if (!this.shut && isPromiseLike(result)) {
      const call = Promise.resolve(result);
      this.running.add(call);
      const forget = () => void this.running.delete(call);
      call.then(forget, forget);
    }
    return result;
  }

  /** Refuse new calls and wait until every admitted one has resolved or rejected. */
  async shutAndDrain(): Promise<void> {
    this.shut = true;
    while (this.running.size > 0) await Promise.allSettled([...this.running]);
  }
}

const noop = () => {};

const isPromiseLike = (value: unknown): value is PromiseLike<unknown> =>
  typeof (value as PromiseLike<unknown> | null | undefined)?.then === 'function';

const AsyncFunction = (async () => {}).constructor;

/**
 * A repository whose method calls `gate` tracks: a call made before close() holds close() until it has settled,
 * however many awaits it takes (its own reads and writes would otherwise be refused once the dialect's gate shuts).
 * Once the gate is shut, an async method rejects at once with StoreClosedError; any other method runs as it is,
 * its queries refused by the dialect's own gate.
 */
export function trackedRepository<R extends object>(repo: R, gate: CallGate): R {
  const wrapped = new Map<PropertyKey, unknown>();
  return new Proxy(repo, {
    get(target, property) {
      const value: unknown = Reflect.get(target, property, target);
      if (typeof value !== 'function') return value;
      let method = wrapped.get(property);
      if (method === undefined) {
        const fn = value as (...args: unknown[]) => unknown;
        const refusable = fn instanceof AsyncFunction;
        method = (...args: unknown[]) =>
          refusable && gate.isShut ? Promise.reject(new StoreClosedError()) : gate.track(fn.apply(target, args));
        wrapped.set(property, method);
      }
      return method;
    },
  });
}

/**
 * Writes with the same lane (a session id) start in the order they were requested, each once the previous one
 * of its lane has settled; other lanes run side by side (WriteOptions.lane, on the pooled server dialects).
 * A barrier (WriteOptions.barrier) starts once every write requested before it has settled, and every write
 * requested after it waits until it has.
 */
export class WriteLanes {
  /** Per lane, the last write requested: it settles (never rejects) when that write has. */
  private readonly last = new Map<string, Promise<void>>();
  /** Writes without a lane, in flight: a barrier waits for them too. */
  private readonly unlaned = new Set<Promise<void>>();
  /** The last barrier requested, until it has settled. */
  private barrierSettled: Promise<void> | undefined;

  /** Start `run` once the lane's previous write (and any barrier before it) has settled. */
  run<T>(lane: string | undefined, run: () => Promise<T>): Promise<T> {
    const previous = lane === undefined ? undefined : this.last.get(lane);
    const barrier = this.barrierSettled;
    const before = previous && barrier ? Promise.all([previous, barrier]) : (previous ?? barrier);
    const result = before ? before.then(run) : run();
    const settled = result.then(noop, noop);
    if (lane === undefined) {
      this.unlaned.add(settled);
      void settled.then(() => this.unlaned.delete(settled));
    } else {
      this.last.set(lane, settled);
      void settled.then(() => {
        if (this.last.get(lane) === settled) this.last.delete(lane);
      });
    }
    return result;
  }

  /** Start `run` once every write requested so far has settled; later writes wait for it. */
  barrier<T>(run: () => Promise<T>): Promise<T> {
    const before = [...this.last.values(), ...this.unlaned];
    if (this.barrierSettled) before.push(this.barrierSettled);
    const result = before.length === 0 ? run() : Promise.all(before).then(run);
    const settled = result.then(noop, noop);
    this.barrierSettled = settled;
    void settled.then(() => {
      if (this.barrierSettled === settled) this.barrierSettled = undefined;
    });
    return result;
  }
}
