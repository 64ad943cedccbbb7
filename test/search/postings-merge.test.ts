/**
 * Merging into stored blocks gives the list a rebuild from scratch would hold (additions placed, replaced ids
 * replaced, removals gone, lengths kept), keeps the blocks disjoint, ascending and within their size, and
 * rewrites only the blocks the change touches.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type PostingsBlock, decodeBlock, encodeBlocks } from '../../src/search/postings-block.js';
import { mergeTerm } from '../../src/search/postings-merge.js';
import type { Posting } from '../../src/search/postings.js';

const positions = fc
  .uniqueArray(fc.integer({ min: 0, max: 500 }), { minLength: 1, maxLength: 12 })
  .map((xs) => [...xs].sort((a, b) => a - b));

/** A term's stored list, changes to it, and a block size. */
const scenario = fc
  .record({
    stored: fc.uniqueArray(fc.integer({ min: 1, max: 2_000 }), { maxLength: 200 }),
    added: fc.uniqueArray(fc.integer({ min: 1, max: 2_400 }), { maxLength: 60 }),
    removedShare: fc.double({ min: 0, max: 0.5, noNaN: true }),
    blockBytes: fc.integer({ min: 16, max: 400 }),
    seed: fc.integer(),
  })
  .chain((s) =>
    fc.record({
      stored: fc.constant([...s.stored].sort((a, b) => a - b)),
      storedPositions: fc.array(positions, { minLength: s.stored.length, maxLength: s.stored.length }),
      added: fc.constant(s.added),
      addedPositions: fc.array(positions, { minLength: s.added.length, maxLength: s.added.length }),
      removed: fc.subarray([...s.stored, ...s.added]).map((xs) => xs.slice(0, Math.ceil(xs.length * s.removedShare))),
      blockBytes: fc.constant(s.blockBytes),
    }),
  );

/** Every posting of the blocks, in id order, with each message's length; asserts the blocks' shape. */
function read(blocks: PostingsBlock[], blockBytes: number): { postings: Posting[]; lengths: Map<number, number> } {
  const sorted = [...blocks].sort((a, b) => a.firstId - b.firstId);
  const postings: Posting[] = [];
  const lengths = new Map<number, number>();
  for (const [i, b] of sorted.entries()) {
    if (i > 0) expect(b.firstId).toBeGreaterThan(sorted[i - 1]!.lastId);
    const d = decodeBlock(b.data, b.firstId, true);
    let bytes = 0;
    for (let k = 0; k < d.ids.length; k++) {
      const at = [...d.positions!.subarray(d.starts![k]!, d.starts![k + 1]!)];
      postings.push({ id: d.ids[k]!, positions: at });
      lengths.set(d.ids[k]!, d.lengths[k]!);
      // A block closes once it reaches the size: every posting but its last starts under it.
      expect(bytes).toBeLessThan(blockBytes);
      bytes += 3 + 2 * at.length;
    }
  }
  return { postings, lengths };
}

describe('merging into stored postings blocks', () => {
  it('gives the list a rebuild would hold, in well-formed blocks, rewriting only what the change touches', () => {
    fc.assert(
      fc.property(scenario, (s) => {
        const length = (id: number, added: boolean) => (added ? 1_000 + id : 600 + id);
        const storedPostings = s.stored.map((id, i) => ({ id, positions: s.storedPositions[i]! }));
        const blocks = encodeBlocks('t', storedPostings, (id) => length(id, false), s.blockBytes);
        const added = s.added.map((id, i) => ({ id, positions: s.addedPositions[i]! }));
        const removed = new Set(s.removed);
        const change = mergeTerm('t', blocks, added, (id) => length(id, true), removed, s.blockBytes);

        const after = [...blocks.filter((b) => !change.remove.includes(b.firstId)), ...change.write];
        const { postings, lengths } = read(after, s.blockBytes);
        const expected = new Map<number, { posting: Posting; length: number }>();
        for (const p of storedPostings) expected.set(p.id, { posting: p, length: length(p.id, false) });
        for (const p of added) expected.set(p.id, { posting: p, length: length(p.id, true) });
        for (const id of removed) expected.delete(id);
        const want = [...expected.values()].sort((a, b) => a.posting.id - b.posting.id);
        expect(postings).toEqual(want.map((w) => w.posting));
        for (const w of want) expect(lengths.get(w.posting.id)).toBe(w.length);

        // A stored block that holds no change's place, and is not the last, is left as it was.
        const lastFirst = Math.max(...blocks.map((b) => b.firstId));
        for (const [i, b] of blocks.entries()) {
          const previous = i === 0 ? Number.NEGATIVE_INFINITY : blocks[i - 1]!.lastId;
          const inPlace = (id: number) => id > previous && id <= b.lastId;
          const changed = s.added.some(inPlace) || s.removed.some((id) => id >= b.firstId && id <= b.lastId);
          if (!changed && b.firstId !== lastFirst) expect(change.remove).not.toContain(b.firstId);
        }
      }),
      { numRuns: 300 },
    );
  });

  it('appends to a list with no blocks yet, and returns nothing to do when nothing changes', () => {
    const p = [{ id: 7, positions: [0, 2] }];
    const first = mergeTerm('t', [], p, () => 5);
    expect(first.remove).toEqual([]);
    expect(first.write.map((b) => [b.firstId, b.lastId, b.count])).toEqual([[7, 7, 1]]);
    expect(mergeTerm('t', first.write, [], () => 5)).toEqual({ remove: [], write: [] });
    expect(mergeTerm('t', first.write, [], () => 5, new Set([8]))).toEqual({ remove: [], write: [] });
    const gone = mergeTerm('t', first.write, [], () => 5, new Set([7]));
    expect(gone).toEqual({ remove: [7], write: [] });
  });

  it('tops up the last block with appends while it has room, instead of starting a block per append', () => {
    let blocks = encodeBlocks('t', [{ id: 1, positions: [0] }], () => 5);
    for (let id = 2; id <= 50; id++) {
      const change = mergeTerm('t', blocks, [{ id, positions: [0] }], () => 5);
      blocks = [...blocks.filter((b) => !change.remove.includes(b.firstId)), ...change.write];
    }
    // 50 postings of 5 bytes fit one 4 KB block.
    expect(blocks.map((b) => [b.firstId, b.lastId, b.count])).toEqual([[1, 50, 50]]);
  });
});
