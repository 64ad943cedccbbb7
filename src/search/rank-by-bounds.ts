/**
 * Ranking by block bounds (rank-postings.ts), when every phrase is one whole word: the IDFs come from the
 * blocks' counts, each stretch of ids gets the best score a message there can reach, and the stretches are
 * read best first until none left can reach the page.
 */
import { B, K1, bm25Weights } from './bm25.js';
import type { BoundPoint } from './postings-block.js';
import type { RankedPostings } from './rank-postings.js';
import {
  type Block,
  type RankInput,
  TopK,
  countable,
  lowerBound,
  possible,
  readBlocks,
  Scorer,
} from './rank-shared.js';

/**
 * Blocks fetched per round trip while the bounds decide what to read: a few first (a page is often filled by
 * the best stretches), twice as many each time the page is not yet decided, up to the most.
 */
const FIRST_READ = 4;
const MOST_READ = 64;
/** Bounds and scores are sums of the same terms in another order: allow their rounding. */
const BOUND_SLACK = 1e-9;

interface Stretch {
  lo: number;
  hi: number;
  blocks: Block[];
  bound: number;
}

export async function byBounds(input: RankInput): Promise<Omit<RankedPostings, 'blocksListed' | 'capped'>> {
  const { q, slots, blocksOfTerm, reader, totals, limit, accept } = input;
  const termOf = slots.map((s) => s[0]?.[0] ?? -1);
  const hits = termOf.map((t) => (t < 0 ? 0 : blocksOfTerm[t]!.reduce((n, b) => n + b.count, 0)));
  const weights = bm25Weights({ rows: totals.messages, tokens: totals.tokens, hits });
  const counts = countable(q);
  const best = (j: number, points: BoundPoint[]) => {
    let max = 0;
    for (const { frequency: f, length } of points) {
      const g = (f * (K1 + 1.0)) / (f + K1 * (1 - B + (B * length) / weights.avgdl));
      if (g > max) max = g;
    }
    return weights.idf[j]! * max;
  };

  // Cut the id line where any block starts or ends: in each stretch, each term has one block or none.
  const edges: { at: number; block: Block; open: boolean }[] = [];
  for (const list of blocksOfTerm)
    for (const b of list)
      edges.push({ at: b.firstId, block: b, open: true }, { at: b.lastId + 1, block: b, open: false });
  edges.sort((a, b) => a.at - b.at);
  const open = new Set<Block>();
  const stretches: Stretch[] = [];
  for (let i = 0; i < edges.length; ) {
    const at = edges[i]!.at;
    for (; i < edges.length && edges[i]!.at === at; i++) {
      if (edges[i]!.open) open.add(edges[i]!.block);
      else open.delete(edges[i]!.block);
    }
    if (open.size === 0 || i === edges.length) continue;
    const blocks = [...open];
    const present = new Set(blocks.map((b) => b.termIndex));
    if (!possible(q.tree, (p) => present.has(termOf[p.index]!))) continue;
    let bound = 0;
    for (const b of blocks)
      for (let j = 0; j < termOf.length; j++) if (termOf[j] === b.termIndex && counts[j]) bound += best(j, b.points);
    stretches.push({ lo: at, hi: edges[i]!.at - 1, blocks, bound });
  }
  stretches.sort((a, b) => b.bound - a.bound || a.lo - b.lo);

  const top = new TopK(limit, accept);
  const freq = new Float64Array(q.phrases.length);
  const scorer = new Scorer(q, weights);
  let blocksRead = 0;
  let batchSize = FIRST_READ;
  const canReach = (s: Stretch) => !top.full || s.bound >= top.threshold * (1 - BOUND_SLACK) - BOUND_SLACK;
  for (let i = 0; i < stretches.length && canReach(stretches[i]!); i++) {
    if (stretches[i]!.blocks.some((b) => b.decoded === null)) {
      // What waits for the filter may raise the threshold: settle it before deciding what to read.
      await top.settle();
      if (!canReach(stretches[i]!)) break;
      // Read ahead: the blocks of the next stretches that can still reach the page, a batch per round trip.
      const batch = new Set<Block>();
      for (let k = i; k < stretches.length && batch.size < batchSize && canReach(stretches[k]!); k++)
        for (const b of stretches[k]!.blocks) if (b.decoded === null) batch.add(b);
      blocksRead += await readBlocks(reader, [...batch]);
      batchSize = Math.min(MOST_READ, batchSize * 2);
    }
    const s = stretches[i]!;
    // The stretch's messages: every id any of its blocks holds in [lo, hi].
    const ranges = s.blocks.map((b) => {
      const ids = b.decoded!.ids;
      return { b, at: lowerBound(ids, s.lo), end: lowerBound(ids, s.hi + 1) };
    });
    for (;;) {
      let id = Number.POSITIVE_INFINITY;
      for (const r of ranges) if (r.at < r.end && r.b.decoded!.ids[r.at]! < id) id = r.b.decoded!.ids[r.at]!;
      if (id === Number.POSITIVE_INFINITY) break;
      freq.fill(0);
      let length = 0;
      for (const r of ranges)
        if (r.at < r.end && r.b.decoded!.ids[r.at] === id) {
          const f = r.b.decoded!.frequencies[r.at]!;
          length = r.b.decoded!.lengths[r.at]!;
          for (let j = 0; j < termOf.length; j++) if (termOf[j] === r.b.termIndex) freq[j] = f;
          r.at++;
        }
      const s = scorer.score(freq, length);
      if (s !== null) top.add(id, s);
    }
    if (top.wantsSettle) await top.settle();
  }
  // A stretch that cannot reach the accepted page cannot reach the final one: it only gets better.
  await top.settle();
  return { ids: top.ids, scores: top.scores, blocksRead };
}
