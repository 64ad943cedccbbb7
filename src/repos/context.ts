import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import type { Runner, Spelling } from '../db/dialect.js';

/**
 * What every repository gets: `d`, how the engine spells SQL (statements and operations are built with it);
 * `run`, what runs those operations (reads, writes, long writes, appends); and the store's clock (epoch seconds).
 */
export interface RepoContext {
  readonly d: Spelling;
  readonly run: Runner;
  now(): number;
}

/**
 * Bring what the engine's search derives from messages up to date, a piece per transaction (`write`: a
 * search's short catch-up; `maintain`: after a bulk load), then vacuum what the pieces left dead.
 */
export async function catchUpSearch(ctx: RepoContext, how: 'write' | 'maintain'): Promise<void> {
  const { d, run } = ctx;
  const step = d.search.catchUp;
  if (step === undefined) return;
  while (await run[how](() => step())) await yieldToEventLoop();
  const tables = d.search.vacuumDue?.();
  if (tables) await run.vacuumTables?.(tables);
}

/** Python's LIMIT: a negative value means "no limit". */
export function sqlLimit(limit: number): number {
  return limit < 0 ? Number.MAX_SAFE_INTEGER : limit;
}
