/**
 * Stored postings blocks give back what they were given (ids, frequencies, lengths, positions), with or
 * without positions; their bound is an upper bound for every message of the block; damaged data is refused.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { K1, B } from '../../src/search/bm25.js';
import { boundOf, decodeBlock, decodeBound, encodeBlocks } from '../../src/search/postings-block.js';
import type { Posting } from '../../src/search/postings.js';

/** A term's list: ascending ids (some past 2^32), each with ascending positions, and each message's length. */
const list = fc
  .array(
    fc.record({
      gap: fc.oneof(fc.integer({ min: 1, max: 5 }), fc.integer({ min: 1, max: 2 ** 33 })),
      positions: fc.uniqueArray(fc.integer({ min: 0, max: 100_000 }), { minLength: 1, maxLength: 40 }),
      extra: fc.integer({ min: 0, max: 5_000 }),
    }),
    { minLength: 1, maxLength: 300 },
  )
  .map((entries) => {
    let id = 0;
    const postings: Posting[] = [];
    const lengths = new Map<number, number>();
    for (const e of entries) {
      id += e.gap;
      const positions = [...e.positions].sort((a, b) => a - b);
      postings.push({ id, positions });
      lengths.set(id, positions[positions.length - 1]! + 1 + e.extra);
    }
    return { postings, lengths };
  });

describe('postings blocks', () => {
  it('give back every posting, its frequency and its message length, with and without positions', () => {
    fc.assert(
      fc.property(list, fc.integer({ min: 8, max: 4096 }), ({ postings, lengths }, blockBytes) => {
        const blocks = encodeBlocks('t', postings, (id) => lengths.get(id)!, blockBytes);
        const back: Posting[] = [];
        let previous = 0;
        for (const b of blocks) {
          expect(b.firstId).toBeGreaterThan(previous);
          previous = b.lastId;
          const full = decodeBlock(b.data, b.firstId, true);
          const lean = decodeBlock(b.data, b.firstId, false);
          expect(full.ids.length).toBe(b.count);
          expect([...lean.ids]).toEqual([...full.ids]);
          expect([...lean.frequencies]).toEqual([...full.frequencies]);
          expect(lean.positions).toBeNull();
          expect(full.ids[0]).toBe(b.firstId);
          expect(full.ids[b.count - 1]).toBe(b.lastId);
          for (let i = 0; i < b.count; i++) {
            const positions = [...full.positions!.subarray(full.starts![i]!, full.starts![i + 1]!)];
            expect(full.frequencies[i]).toBe(positions.length);
            expect(full.lengths[i]).toBe(lengths.get(full.ids[i]!));
            back.push({ id: full.ids[i]!, positions });
          }
        }
        expect(back).toEqual(postings);
      }),
    );
  });

  it("bound every message of the block: no message's bm25 term beats the best of the bound's pairs", () => {
    fc.assert(
      fc.property(list, fc.double({ min: 1, max: 500, noNaN: true }), ({ postings, lengths }, avgdl) => {
        const g = (f: number, length: number) => (f * (K1 + 1)) / (f + K1 * (1 - B + (B * length) / avgdl));
        for (const b of encodeBlocks('t', postings, (id) => lengths.get(id)!, 256)) {
          const points = decodeBound(b.bound);
          expect(points.length).toBeGreaterThan(0);
          expect(points.length).toBeLessThanOrEqual(8);
          const best = Math.max(...points.map((p) => g(p.frequency, p.length)));
          const block = decodeBlock(b.data, b.firstId, false);
          for (let i = 0; i < block.ids.length; i++)
            expect(g(block.frequencies[i]!, block.lengths[i]!)).toBeLessThanOrEqual(best);
        }
      }),
    );
  });

  it('keep the pairs no other pair beats, and merge neighbours into looser pairs beyond eight', () => {
    expect(
      boundOf([
        { frequency: 1, length: 10 },
        { frequency: 3, length: 50 },
        { frequency: 2, length: 60 },
        { frequency: 1, length: 5 },
      ]),
    ).toEqual([
      { frequency: 3, length: 50 },
      { frequency: 1, length: 5 },
    ]);
    const many = Array.from({ length: 20 }, (_, i) => ({ frequency: 20 - i, length: 100 - i }));
    const bound = boundOf(many);
    expect(bound.length).toBe(8);
    for (const p of many) expect(bound.some((q) => q.frequency >= p.frequency && q.length <= p.length)).toBe(true);
  });

  it('refuse truncated and padded data', () => {
    const postings: Posting[] = [
      { id: 5, positions: [0, 3] },
      { id: 900, positions: [200] },
    ];
    const [block] = encodeBlocks('t', postings, () => 300);
    expect(() => decodeBlock(block!.data.subarray(0, block!.data.length - 1), 5, true)).toThrow(/truncated/);
    expect(() => decodeBlock(new Uint8Array([...block!.data, 0]), 5, true)).toThrow(/trailing/);
    expect(() => decodeBlock(new Uint8Array(0), 5, false)).toThrow(/truncated/);
  });
});
