/**
 * How a block index is kept, the same on every engine that keeps one (Postgres, MySQL): the two indexes, and
 * how much each catch-up piece takes on, so that one transaction holds the event loop a bounded time.
 */
import type { QueryMode } from '../search/query.js';

/** The two indexes, as the `kind` column numbers them. */
export const INDEX_KINDS = { words: 0, substrings: 1 } as const;
export const MODES: readonly QueryMode[] = ['words', 'substrings'];

/** Text tokenized per catch-up transaction: a bounded stretch of the event loop per piece. */
export const TOKENIZE_BYTES = 256 * 1024;
/** Queued messages looked at per catch-up transaction. */
export const TOKENIZE_ROWS = 500;
/** The recent segment is folded into the blocks once it holds this many messages. */
export const MERGE_AT = 2_000;
/** Postings (encoded bytes) folded per merge transaction. */
export const MERGE_BYTES = 8 * 2 ** 20;
/**
 * Queued messages from which an empty index (a store's first, after an upgrade or an import into a new store)
 * is built in one pass, in one transaction (blocks-build.ts): merging them a batch at a time would rewrite each
 * term's last block once per batch.
 */
export const BUILD_AT = 5_000;
/** Removed messages taken out of the blocks per transaction. */
export const REMOVE_ROWS = 200;
/** Bytes of block data a process keeps for the next searches (the blocks of common words, read again and again). */
export const BLOCK_CACHE_BYTES = 32 * 2 ** 20;

/** The ids of `rows` (in order) whose `bytes` fit `budget`; at least one, whatever its size. */
export function withinBytes(rows: readonly Record<string, unknown>[], budget: number): number[] {
  const ids: number[] = [];
  let bytes = 0;
  for (const r of rows) {
    if (ids.length > 0 && bytes + Number(r.bytes) > budget) break;
    ids.push(Number(r.id));
    bytes += Number(r.bytes);
  }
  return ids;
}
