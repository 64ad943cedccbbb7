import type { Dialect } from '../db/dialect.js';

/** What every repository gets: the dialect slots and the store's clock (epoch seconds). */
export interface RepoContext {
  readonly d: Dialect;
  now(): number;
}

/** Python's LIMIT: a negative value means "no limit". */
export function sqlLimit(limit: number): number {
  return limit < 0 ? Number.MAX_SAFE_INTEGER : limit;
}
