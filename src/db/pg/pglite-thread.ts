/**
 * PGlite on a worker thread. PGlite is Postgres compiled to WASM: a statement runs on the thread that
 * called it, and a search at the query cap (an OR of hundreds of prefixes, a LIKE scan per token over
 * megabyte rows) keeps it busy for seconds. A store opened from a `pglite:` URL owns its instance, so the
 * instance lives on a worker thread and the event loop only awaits rows. `PgliteThread` has the part of
 * PGlite's interface that Drizzle's PGlite driver and this package call (`query`, `exec`, `transaction`,
 * `waitReady`, `close`).
 *
 * One thread per process hosts every such instance, as the main thread did before: PGlite compiles its
 * WASM once per thread, and a thread per store would pay that on every open. Statements of two stores
 * take turns on it, as they did on the main thread. The thread is not referenced while nothing waits on it.
 * The thread loads PGlite's CommonJS build (see request-thread.ts for why the source is inline).
 */
import { createRequire } from 'node:module';
import { ConnectionError } from '../../errors.js';
import { RequestThread } from '../request-thread.js';

const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const { PGlite } = require(workerData.pglite);
const { pg_trgm } = require(workerData.pgTrgm);
const identity = (value) => value;
// Per instance: its PGlite, and its open transactions (their PGlite transaction object, and how to end them).
const instances = new Map();

function errorOf(error) {
  if (!(error instanceof Error)) return { message: String(error), fields: {} };
  const fields = {};
  for (const [key, value] of Object.entries(error)) {
    if (value === null || ['string', 'number', 'boolean'].includes(typeof value)) fields[key] = value;
  }
  return { name: error.name, message: error.message, fields };
}

function queryOptions(m) {
  if (m.rowMode === undefined && m.textTypes === undefined) return undefined;
  const parsers = {};
  for (const type of m.textTypes ?? []) parsers[type] = identity;
  return { rowMode: m.rowMode, parsers };
}

function resultOf(r) {
  return { rows: r.rows, fields: r.fields, affectedRows: r.affectedRows };
}

async function open(m) {
  const options = { extensions: { pg_trgm } };
  const db = m.dataDir === null ? new PGlite(options) : new PGlite(m.dataDir, options);
  try {
    await db.waitReady;
  } catch (error) {
    await db.close().catch(() => {});
    throw error;
  }
  instances.set(m.instance, { db, transactions: new Map(), nextTransaction: 0 });
  return null;
}

async function handle(m) {
  if (m.kind === 'open') return open(m);
  const instance = instances.get(m.instance);
  if (instance === undefined) throw new Error('this PGlite instance is closed');
  const { db, transactions } = instance;
  const on = m.transaction === null || m.transaction === undefined ? db : transactions.get(m.transaction)?.tx;
  if (on === undefined) throw new Error('the transaction has ended');
  switch (m.kind) {
    case 'query':
      return resultOf(await on.query(m.text, m.params, queryOptions(m)));
    case 'exec':
      return (await on.exec(m.text)).map(resultOf);
    case 'begin': {
      const id = instance.nextTransaction++;
      const entry = {};
      let begun;
      const started = new Promise((resolve) => { begun = resolve; });
      entry.settled = db.transaction(
        (tx) =>
          new Promise((commit, rollback) => {
            Object.assign(entry, { tx, commit, rollback });
            transactions.set(id, entry);
            begun();
          }),
      );
      entry.settled.finally(() => transactions.delete(id)).catch(() => {});
      // A BEGIN that fails (a closed instance) settles the transaction before its body ever runs.
      await Promise.race([started, entry.settled]);
      return id;
    }
    case 'end': {
      const open = transactions.get(m.transaction);
      if (open === undefined) throw new Error('the transaction has ended');
      if (m.commit) open.commit();
      else open.rollback(new Error('rolled back'));
      try {
        await open.settled;
      } catch (error) {
        if (m.commit) throw error;
      }
      return null;
    }
    case 'close':
      instances.delete(m.instance);
      await db.close();
      return null;
  }
  throw new Error('unknown request ' + m.kind);
}

parentPort.on('message', (m) => {
  handle(m).then(
    (result) => parentPort.postMessage({ id: m.id, ok: true, result }),
    (error) => parentPort.postMessage({ id: m.id, ok: false, error: errorOf(error) }),
  );
});
`;

/** PGlite's result shape, as Drizzle and this package read it. */
export interface ThreadResults<T> {
  rows: T[];
  fields: { name: string; dataTypeID: number }[];
  affectedRows?: number;
}

export interface ThreadQueryOptions {
  rowMode?: 'array' | 'object';
  /** Per type id, a parser; only `(value) => value` (keep the server's text) crosses to the worker. */
  parsers?: Record<number, (value: string, typeId: number) => unknown>;
}

type Request =
  | { kind: 'open'; dataDir: string | null }
  | { kind: 'close' }
  | {
      kind: 'query';
      transaction: number | null;
      text: string;
      params: readonly unknown[];
      rowMode?: 'array' | 'object';
      textTypes?: number[];
    }
  | { kind: 'exec'; transaction: number | null; text: string }
  | { kind: 'begin' }
  | { kind: 'end'; transaction: number; commit: boolean };

interface WorkerError {
  name?: string;
  message: string;
  fields: Record<string, unknown>;
}

/** An error PGlite raised on the worker, with its fields (`code`, `detail`, `constraint`…) as it had them. */
export class PgliteThreadError extends Error {
  constructor(error: WorkerError) {
    super(error.message);
    Object.assign(this, error.fields);
    this.name = error.name ?? 'Error';
  }
}

/** A query runner over one connection: the instance itself, or one of its open transactions. */
export interface ThreadQueries {
  query<T>(text: string, params?: readonly unknown[], options?: ThreadQueryOptions): Promise<ThreadResults<T>>;
  exec(text: string): Promise<ThreadResults<unknown>[]>;
}

export interface ThreadTransaction extends ThreadQueries {
  /** Roll the transaction back: Drizzle's `tx.rollback()` throws, which ends up here through the body. */
  rollback(): Promise<void>;
  readonly closed: boolean;
}

function textTypesOf(parsers: ThreadQueryOptions['parsers']): number[] | undefined {
  if (parsers === undefined) return undefined;
  return Object.entries(parsers).map(([type, parse]) => {
    // Anything else would have to run on the worker: no caller of ours passes one.
    if (parse('2000-01-01', Number(type)) !== '2000-01-01')
      throw new TypeError(`a PGlite parser for type ${type} that changes the value cannot cross to the worker thread`);
    return Number(type);
  });
}

/** The thread hosting this process's PGlite instances: started with the first, kept (unreferenced when idle). */
class PgliteHost {
  private static current: PgliteHost | null = null;
  private readonly thread: RequestThread<Request & { instance: number }>;

  /** The running host, or a new one when there is none or it failed. */
  static shared(): PgliteHost {
    if (PgliteHost.current === null || PgliteHost.current.thread.failed !== null) PgliteHost.current = new PgliteHost();
    return PgliteHost.current;
  }

  private constructor() {
    const require = createRequire(import.meta.url);
    this.thread = new RequestThread({
      source: WORKER_SOURCE,
      workerData: {
        pglite: require.resolve('@electric-sql/pglite'),
        pgTrgm: require.resolve('@electric-sql/pglite/contrib/pg_trgm'),
      },
      decodeError: (error) =>
        new PgliteThreadError((error as WorkerError | undefined) ?? { message: 'unknown error', fields: {} }),
      failed: (cause, code) =>
        new Error(
          cause ? `PGlite's worker thread failed: ${cause.message}` : `PGlite's worker thread exited (code ${code})`,
        ),
    });
  }

  send(instance: number, request: Request): Promise<unknown> {
    return this.thread.send({ ...request, instance });
  }
}

let nextInstance = 0;

export class PgliteThread implements ThreadQueries {
  private readonly host = PgliteHost.shared();
  private readonly instance = nextInstance++;
  /** Queries outside a transaction. */
  private readonly direct = this.runner(null);
  readonly waitReady: Promise<void>;

  constructor(
    dataDir: string | null,
    private readonly where: string,
  ) {
    this.waitReady = this.send({ kind: 'open', dataDir }).then(() => {});
  }

  private async send(request: Request): Promise<unknown> {
    try {
      return await this.host.send(this.instance, request);
    } catch (error) {
      if (error instanceof PgliteThreadError) throw error;
      // The thread itself failed (out of memory, a WASM abort): every store on it has lost its database.
      throw new ConnectionError(this.where, error instanceof Error ? error.message : String(error), { cause: error });
    }
  }

  private runner(transaction: number | null): ThreadQueries {
    return {
      query: async <T>(text: string, params: readonly unknown[] = [], options?: ThreadQueryOptions) =>
        (await this.send({
          kind: 'query',
          transaction,
          text,
          params,
          rowMode: options?.rowMode,
          textTypes: textTypesOf(options?.parsers),
        })) as ThreadResults<T>,
      exec: async (text: string) => (await this.send({ kind: 'exec', transaction, text })) as ThreadResults<unknown>[],
    };
  }

  query<T>(text: string, params?: readonly unknown[], options?: ThreadQueryOptions): Promise<ThreadResults<T>> {
    return this.direct.query<T>(text, params, options);
  }

  exec(text: string): Promise<ThreadResults<unknown>[]> {
    return this.direct.exec(text);
  }

  /** PGlite's transaction: committed when `body` resolves, rolled back when it throws. */
  async transaction<T>(body: (tx: ThreadTransaction) => Promise<T>): Promise<T> {
    const id = (await this.send({ kind: 'begin' })) as number;
    let closed = false;
    const end = async (commit: boolean) => {
      if (closed) return;
      closed = true;
      await this.send({ kind: 'end', transaction: id, commit });
    };
    const tx: ThreadTransaction = {
      ...this.runner(id),
      rollback: () => end(false),
      get closed() {
        return closed;
      },
    };
    let value: T;
    try {
      value = await body(tx);
    } catch (error) {
      await end(false).catch(() => {});
      throw error;
    }
    await end(true);
    return value;
  }

  /** Close the instance (flushing a data directory to disk). With its thread gone, nothing is left to close. */
  async close(): Promise<void> {
    try {
      await this.host.send(this.instance, { kind: 'close' });
    } catch (error) {
      if (error instanceof PgliteThreadError) throw error;
    }
  }
}
