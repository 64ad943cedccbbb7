/**
 * How stored postings blocks change (postings-block.ts), for engines that keep them: a term's new postings and
 * removed messages are merged into its blocks by rewriting only the blocks they touch, so the rest of a long
 * list is never read or written. Appends land at the end of a list (ids grow), where the last block is topped
 * up until it is full; a posting whose id falls inside a block (a message committed late) or a removed
 * message rewrites that block alone.
 */
import type { Posting } from './postings.js';
import { BLOCK_BYTES, type PostingsBlock, decodeBlock, encodeBlocks } from './postings-block.js';

/** What merging changes for one term: blocks to delete (by first id) and blocks to write. */
export interface TermMerge {
  remove: number[];
  write: PostingsBlock[];
}

/** A stored block's postings and message lengths, decoded. */
function postingsOf(block: PostingsBlock, lengths: Map<number, number>): Posting[] {
  const d = decodeBlock(block.data, block.firstId, true);
  const out: Posting[] = [];
  for (let i = 0; i < d.ids.length; i++) {
    const id = d.ids[i]!;
    lengths.set(id, d.lengths[i]!);
    out.push({ id, positions: [...d.positions!.subarray(d.starts![i]!, d.starts![i + 1]!)] });
  }
  return out;
}

/**
 * Merge into a term's `blocks` (its stored blocks, any order) the `added` postings (each with its message's
 * length in `lengthOf`; an id already stored is replaced) and drop the `removed` message ids (a removal wins
 * over an addition of the same id). Only blocks holding a removed id or an added id's place are rewritten;
 * the last block is rewritten to take appended postings while it is under `blockBytes`.
 */
export function mergeTerm(
  term: string,
  blocks: readonly PostingsBlock[],
  added: readonly Posting[],
  lengthOf: (id: number) => number,
  removed: ReadonlySet<number> = new Set(),
  blockBytes = BLOCK_BYTES,
): TermMerge {
  const sorted = [...blocks].sort((a, b) => a.firstId - b.firstId);
  const adds = [...added].sort((a, b) => a.id - b.id);
  const touched = new Set<PostingsBlock>();
  /** The first block whose last id is at or past `id` (where a posting of `id` belongs), if any. */
  const blockFor = (id: number): PostingsBlock | undefined => {
    let lo = 0;
    let hi = sorted.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (sorted[mid]!.lastId < id) lo = mid + 1;
      else hi = mid;
    }
    return sorted[lo];
  };
  // An added posting goes to the block that holds its id's place (a gap between blocks: the next one), or
  // past the last block.
  for (const p of adds) {
    const home = blockFor(p.id);
    if (home) touched.add(home);
  }
  for (const id of removed) {
    const home = blockFor(id);
    if (home && id >= home.firstId) touched.add(home);
  }
  const last = sorted[sorted.length - 1];
  // The last block takes appended postings while it has room.
  const appends = last ? adds.filter((p) => p.id > last.lastId) : adds;
  if (last && appends.length > 0 && last.data.length < blockBytes) touched.add(last);
  if (touched.size === 0 && appends.length === 0) return { remove: [], write: [] };

  // Rewrite the touched blocks as runs: neighbouring touched blocks are re-cut together.
  const lengths = new Map<number, number>();
  const addedById = new Map(adds.map((p) => [p.id, p]));
  const remove: number[] = [];
  const write: PostingsBlock[] = [];
  const lengthAt = (id: number) => (addedById.has(id) ? lengthOf(id) : lengths.get(id)!);
  let run: Posting[] = [];
  const flush = () => {
    const kept = run.filter((p) => !removed.has(p.id));
    if (kept.length > 0) write.push(...encodeBlocks(term, kept, lengthAt, blockBytes));
    run = [];
  };
  const placed = new Set<number>();
  for (const [i, b] of sorted.entries()) {
    if (!touched.has(b)) {
      flush();
      continue;
    }
    remove.push(b.firstId);
    const low = i === 0 ? Number.NEGATIVE_INFINITY : sorted[i - 1]!.lastId;
    const high = i === sorted.length - 1 ? Number.POSITIVE_INFINITY : b.lastId;
    const merged = new Map<number, Posting>();
    for (const p of postingsOf(b, lengths)) merged.set(p.id, p);
    for (const p of adds)
      if (p.id > low && p.id <= high) {
        merged.set(p.id, p);
        placed.add(p.id);
      }
    run.push(...[...merged.values()].sort((x, y) => x.id - y.id));
  }
  // Appends no block took (no blocks yet, or the last block was full) start new blocks.
  const rest = adds.filter((p) => !placed.has(p.id));
  if (rest.length > 0) {
    flush();
    run = rest;
  }
  flush();
  return { remove, write };
}
