/**
 * SQLite write serialisation across processes: `BEGIN IMMEDIATE`, and when another process holds the write
 * lock past the (short) busy timeout, retry after a pause that grows from ~1 ms to ~100 ms with jitter, awaited
 * so the event loop runs meanwhile, bounded by elapsed time rather than by a count of attempts (a VACUUM next
 * door can legitimately take seconds), then give up with StoreBusyError.
 *
 * The body must be synchronous: better-sqlite3 cannot keep a transaction open across an `await`.
 */
import type { Database } from 'better-sqlite3';
import { StoreBusyError } from '../../errors.js';

export interface BusyRetryOptions {
  /** Give up after this long (ms) of waiting for the lock. */
  deadlineMs: number;
}

/** The SQLite result code behind an error, looking through Drizzle's DrizzleQueryError wrapper. */
export function sqliteErrorCode(error: unknown): string | undefined {
  for (let e = error, depth = 0; e && depth < 5; depth++) {
    if (typeof e === 'object' && 'code' in e && typeof e.code === 'string' && e.code.startsWith('SQLITE_')) {
      return e.code;
    }
    e = typeof e === 'object' && e !== null && 'cause' in e ? e.cause : undefined;
  }
  return undefined;
}

export function isSqliteBusy(error: unknown): boolean {
  const code = sqliteErrorCode(error);
  return code !== undefined && (code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED'));
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
const MAX_PAUSE_MS = 100;

/** Run `attempt` until it does not fail with SQLITE_BUSY/LOCKED or the deadline passes. */
export async function retryWhileBusy<T>(attempt: () => T, options: BusyRetryOptions): Promise<T> {
  const started = Date.now();
  for (let retry = 0; ; retry++) {
    try {
      return attempt();
    } catch (error) {
      if (!isSqliteBusy(error)) throw error;
      const waited = Date.now() - started;
      if (waited >= options.deadlineMs) throw new StoreBusyError(waited, { cause: error });
      const pause = Math.min(MAX_PAUSE_MS, 2 ** retry);
      await sleep(pause / 2 + Math.random() * pause);
    }
  }
}

/** `BEGIN IMMEDIATE; body; COMMIT` (ROLLBACK on any error), retried while another writer holds the lock. */
export function immediateTransaction<T>(client: Database, body: () => T, options: BusyRetryOptions): Promise<T> {
  return retryWhileBusy(() => immediateOnce(client, body), options);
}

/** One attempt at `BEGIN IMMEDIATE; body; COMMIT` (ROLLBACK on any error), now; SQLITE_BUSY is the caller's to handle. */
export function immediateOnce<T>(client: Database, body: () => T): T {
  return runner(client).immediate(body) as T;
}

/** One transaction wrapper per connection (better-sqlite3 builds a new one per transaction() call). */
const runners = new WeakMap<Database, ReturnType<Database['transaction']>>();
function runner(client: Database): ReturnType<Database['transaction']> {
  let tx = runners.get(client);
  if (!tx) {
    tx = client.transaction((body: () => unknown) => body());
    runners.set(client, tx);
  }
  return tx;
}
