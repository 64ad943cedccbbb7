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
  matches,
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

/** The term each phrase stands for (every phrase is one whole word here), -1 for an empty phrase. */
const termsOfPhrases = (input: RankInput) => input.slots.map((s) => s[0]?.[0] ?? -1);

/** Per term: whether every match holds it (the query cannot match without it: AND, NOT's left side). */
function requiredTerms(input: RankInput, termOf: number[]): boolean[] {
  return input.blocksOfTerm.map((_, t) => !possible(input.q.tree, (p) => termOf[p.index] !== t));
}

/** A block's ids within a stretch: from `at` to `end` (newest first: `at` falls to `end`). */
interface Range {
  b: Block;
  at: number;
  end: number;
}

/**
 * The range whose ids alone can match in a stretch: the shortest of a term every match holds; -1 when no
 * term is required (an OR), and every id of every range is looked at. Driving "the AND cpu" from "cpu"
 * skips the thousands of "the" that cannot match.
 */
function driverOf(ranges: readonly Range[], required: readonly boolean[]): number {
  let driver = -1;
  for (const [k, r] of ranges.entries())
    if (
      required[r.b.termIndex] &&
      (driver < 0 || Math.abs(r.end - r.at) < Math.abs(ranges[driver]!.end - ranges[driver]!.at))
    )
      driver = k;
  return driver;
}

/**
 * The id line cut where any block starts or ends, ascending: in each stretch each term has one block or none.
 * Stretches where the query cannot match (a term it needs has no block there) are left out.
 */
function cutStretches(input: RankInput, termOf: number[]): Omit<Stretch, 'bound'>[] {
  const { q, blocksOfTerm } = input;
  const edges: { at: number; block: Block; open: boolean }[] = [];
  for (const list of blocksOfTerm)
    for (const b of list)
      edges.push({ at: b.firstId, block: b, open: true }, { at: b.lastId + 1, block: b, open: false });
  edges.sort((a, b) => a.at - b.at);
  const open = new Set<Block>();
  const out: Omit<Stretch, 'bound'>[] = [];
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
    out.push({ lo: at, hi: edges[i]!.at - 1, blocks });
  }
  return out;
}

/** Matches (filters applied) looked at per call of the filter while finding the window's floor. */
const FLOOR_BATCH = 512;

/**
 * The rank window's floor for a query of whole words: the id of its `window`-th newest match (filters
 * applied), found by reading blocks newest first; null when it has no more than `window` matches.
 */
export async function newestFloor(input: RankInput, window: number): Promise<number | null> {
  const { q, reader, accept, pacer } = input;
  const termOf = termsOfPhrases(input);
  const required = requiredTerms(input, termOf);
  const cuts = cutStretches(input, termOf).reverse();
  const freq = new Float64Array(q.phrases.length);
  const counted: number[] = [];
  let found = 0;
  let pending: number[] = [];
  let batchSize = FIRST_READ;
  /** Counts the pending matches the filter accepts, newest first; the floor once the window is full. */
  const settle = async (): Promise<number | null> => {
    const ok = accept === null ? null : await accept(pending);
    for (const id of pending) if ((ok === null || ok.has(id)) && ++found === window) return id;
    pending = [];
    return null;
  };
  for (let i = 0; i < cuts.length; i++) {
    if (cuts[i]!.blocks.some((b) => b.decoded === null)) {
      const batch = new Set<Block>();
      for (let k = i; k < cuts.length && batch.size < batchSize; k++)
        for (const b of cuts[k]!.blocks) if (b.decoded === null) batch.add(b);
      await readBlocks(reader, [...batch], pacer);
      batchSize = Math.min(MOST_READ, batchSize * 2);
    }
    const { lo, hi, blocks } = cuts[i]!;
    // The stretch's ids, newest first.
    const ranges: Range[] = blocks.map((b) => ({
      b,
      at: lowerBound(b.decoded!.ids, hi + 1) - 1,
      end: lowerBound(b.decoded!.ids, lo),
    }));
    const driver = driverOf(ranges, required);
    for (;;) {
      let id = Number.NEGATIVE_INFINITY;
      if (driver >= 0) {
        const d = ranges[driver]!;
        if (d.at < d.end) break;
        id = d.b.decoded!.ids[d.at]!;
        // The others skip to it (backwards) past ids that cannot match.
        for (const r of ranges)
          if (r.at >= r.end && r.b.decoded!.ids[r.at]! > id) r.at = lowerBound(r.b.decoded!.ids, id + 1) - 1;
      } else for (const r of ranges) if (r.at >= r.end && r.b.decoded!.ids[r.at]! > id) id = r.b.decoded!.ids[r.at]!;
      if (id === Number.NEGATIVE_INFINITY) break;
      freq.fill(0);
      for (const r of ranges)
        if (r.at >= r.end && r.b.decoded!.ids[r.at] === id) {
          const f = r.b.decoded!.frequencies[r.at]!;
          for (let j = 0; j < termOf.length; j++) if (termOf[j] === r.b.termIndex) freq[j] = f;
          r.at--;
        }
      counted.length = 0;
      if (!matches(q.tree, freq, counted)) continue;
      pending.push(id);
      if (pending.length >= (accept === null ? 1 : FLOOR_BATCH)) {
        const floor = await settle();
        if (floor !== null) return floor;
      }
    }
    if (pacer?.due()) await pacer.pause();
  }
  return pending.length > 0 ? await settle() : null;
}

export async function byBounds(input: RankInput): Promise<Omit<RankedPostings, 'blocksListed' | 'capped'>> {
  const { q, reader, totals, limit, accept, pacer } = input;
  const blocksOfTerm = input.blocksOfTerm;
  const termOf = termsOfPhrases(input);
  const required = requiredTerms(input, termOf);
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

  const floor = input.floor ?? Number.NEGATIVE_INFINITY;
  const stretches: Stretch[] = [];
  for (const cut of cutStretches(input, termOf)) {
    // Below the rank window's floor nothing is ranked; a stretch across it is ranked from the floor up.
    if (cut.hi < floor) continue;
    let bound = 0;
    for (const b of cut.blocks)
      for (let j = 0; j < termOf.length; j++) if (termOf[j] === b.termIndex && counts[j]) bound += best(j, b.points);
    stretches.push({ lo: Math.max(cut.lo, floor), hi: cut.hi, blocks: cut.blocks, bound });
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
      blocksRead += await readBlocks(reader, [...batch], pacer);
      batchSize = Math.min(MOST_READ, batchSize * 2);
    }
    const s = stretches[i]!;
    // The stretch's messages: every id any of its blocks holds in [lo, hi].
    const ranges: Range[] = s.blocks.map((b) => {
      const ids = b.decoded!.ids;
      return { b, at: lowerBound(ids, s.lo), end: lowerBound(ids, s.hi + 1) };
    });
    const driver = driverOf(ranges, required);
    for (;;) {
      let id = Number.POSITIVE_INFINITY;
      if (driver >= 0) {
        const d = ranges[driver]!;
        if (d.at >= d.end) break;
        id = d.b.decoded!.ids[d.at]!;
        // The others skip to it past ids that cannot match.
        for (const r of ranges)
          if (r.at < r.end && r.b.decoded!.ids[r.at]! < id) r.at = lowerBound(r.b.decoded!.ids, id, r.at);
      } else for (const r of ranges) if (r.at < r.end && r.b.decoded!.ids[r.at]! < id) id = r.b.decoded!.ids[r.at]!;
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
    if (pacer?.due()) await pacer.pause();
  }
  // A stretch that cannot reach the accepted page cannot reach the final one: it only gets better.
  await top.settle();
  return { ids: top.ids, scores: top.scores, blocksRead };
}
