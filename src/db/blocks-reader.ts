/**
 * What a search reads of one block index, the same on every engine that keeps one (Postgres, MySQL): the engine
 * gives its statements, this ties them to the shared core's reader (src/search/postings-index.ts) and to the
 * process' cache of block data, keyed by row version.
 */
import type { BlockDataCache } from '../search/block-data-cache.js';
import { type PostingsStorage, type RecentMessage, postingsReader } from '../search/postings-index.js';
import type { BlockEntry, PostingsReader, Totals } from '../search/rank-postings.js';
import type { Op } from './ops.js';

/**
 * A listed block with its row version (Postgres' xmin, MySQL's version column). A row version's bytes never
 * change, so a block's data may be reused from the cache while (term, first id, version) are the same.
 */
export interface ListedBlock extends BlockEntry {
  version: string;
}
const hasVersion = (b: BlockEntry): b is ListedBlock => typeof (b as Partial<ListedBlock>).version === 'string';

/** An engine's reads of one index (its `kind`: 0 words, 1 trigrams). */
export interface BlockIndexReads {
  /** Merged blocks (without data) of these terms and of every term starting with one of the prefixes. */
  list(terms: readonly string[], prefixes: readonly string[]): Op<BlockEntry[]>;
  /** The data of these blocks, in their order. */
  read(blocks: readonly { term: string; firstId: number }[]): Op<Uint8Array[]>;
  /** The recent segment's messages, decoded, ids ascending. */
  recent(): Op<RecentMessage[]>;
  /** Messages and tokens in the blocks. */
  totals(): Op<Totals>;
}

/** The reader a search ranks with; every read goes through `read` (one snapshot: see Runner.snapshot). */
export function blockIndexReader(
  kind: number,
  reads: BlockIndexReads,
  cache: BlockDataCache,
  read: <T>(op: Op<T>) => Promise<T>,
): PostingsReader {
  const unsupported = () => Promise.reject(new Error('a search does not write the index'));
  const storage: PostingsStorage = {
    list: (terms, prefixes) => read(reads.list(terms, prefixes)),
    read: (blocks) =>
      cache.read(
        blocks,
        (b) => (hasVersion(b) ? `${kind}\u0000${b.term}\u0000${b.firstId}\u0000${b.version}` : null),
        (missing) => read(reads.read(missing)),
      ),
    recent: () => read(reads.recent()),
    mergedTotals: () => read(reads.totals()),
    tails: unsupported,
    holding: unsupported,
    commit: unsupported,
  };
  return postingsReader(storage);
}
