/**
 * bm25Weights when Postgres' corpus totals lag behind the matches (they are read beside them, on another
 * pooled connection, so a commit can land in between): finite weights, never a division by zero.
 */
import { describe, expect, it } from 'vitest';
import { bm25Score, bm25Weights } from '../../src/search/bm25.js';

describe('bm25Weights', () => {
  it('gives finite weights when the totals read 0 rows while there are matches', () => {
    const w = bm25Weights({ rows: 0, tokens: 0, hits: [3, 1] });
    expect(w.idf.every(Number.isFinite)).toBe(true);
    expect(Number.isFinite(w.avgdl)).toBe(true);
    expect(Number.isFinite(bm25Score([1, 2], 10, w))).toBe(true);
  });

  it('is unchanged when the totals cover the matches (FTS5: idf = ln((N - n + 0.5) / (n + 0.5)), floored at 1e-6)', () => {
    const w = bm25Weights({ rows: 100, tokens: 2500, hits: [10, 90] });
    expect(w.idf[0]).toBeCloseTo(Math.log(90.5 / 10.5), 12);
    expect(w.idf[1]).toBe(1e-6);
    expect(w.avgdl).toBe(25);
  });
});
