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

/** Python's LIMIT: a negative value means "no limit". */
export function sqlLimit(limit: number): number {
  return limit < 0 ? Number.MAX_SAFE_INTEGER : limit;
}
