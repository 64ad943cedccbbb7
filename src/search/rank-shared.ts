/**
 * What both ways of ranking postings share (rank-postings.ts): a listed block as they hold it, the query's
 * evaluation on one message as FTS5 does it, the page kept best first, and the reads.
 */
import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import { bm25Score } from './bm25.js';
import type { CompiledPhrase, CompiledQuery } from './fts5-match.js';
import { type BoundPoint, type DecodedBlock, decodeBlock } from './postings-block.js';
import type { BlockEntry, PostingsReader, Totals } from './rank-postings.js';

/** A listed block: its term's number, its bound, and its data once read. */
export interface Block extends BlockEntry {
  termIndex: number;
  points: BoundPoint[];
  data: Uint8Array | null;
  decoded: DecodedBlock | null;
}

/** What both ways of ranking are given. */
export interface RankInput {
  q: CompiledQuery;
  /** Per phrase, per word: the numbers of the terms it stands for (several for a prefix). */
  slots: number[][][];
  /** Per term number: its listed blocks, ascending. */
  blocksOfTerm: Block[][];
  reader: PostingsReader;
  totals: Totals;
  limit: number;
  accept: Accept;
  /** Only messages with this id or above are ranked (the rank window's floor); bm25's counts stay whole. */
  floor?: number;
  /** Every match: rank only the newest `window` matches when there are more (sets the floor itself). */
  window?: number;
  /** Every match, in id order (see RankOptions.unordered). */
  unordered?: boolean;
  pacer?: Pacer;
}

/**
 * Whether the query matches a message in which phrase j occurs `freq[j]` times; the phrases FTS5 counts for
 * it are pushed to `counted` (see fts5-match.ts: AND keeps its children's only when all match, OR those of its
 * matching children, NOT its left side's only when the right does not match; the right side never counts).
 */
export type Node = CompiledQuery['tree'];
export function matches(node: Node, freq: Float64Array, counted: number[]): boolean {
  switch (node.kind) {
    case 'phrase': {
      const j = node.phrase.index;
      if (node.phrase.tokens.length === 0 || freq[j]! === 0) return false;
      counted.push(j);
      return true;
    }
    case 'and': {
      const mark = counted.length;
      for (const child of node.children)
        if (!matches(child, freq, counted)) {
          counted.length = mark;
          return false;
        }
      return true;
    }
    case 'or': {
      let any = false;
      for (const child of node.children) {
        const mark = counted.length;
        if (matches(child, freq, counted)) any = true;
        else counted.length = mark;
      }
      return any;
    }
    case 'not': {
      const mark = counted.length;
      if (!matches(node.left, freq, counted)) {
        counted.length = mark;
        return false;
      }
      const left = counted.length;
      const right = matches(node.right, freq, counted);
      counted.length = right ? mark : left;
      return !right;
    }
  }
}

/** Whether a message holding some of the phrases could match (NOT's right side may be absent). */
export function possible(node: Node, present: (p: CompiledPhrase) => boolean): boolean {
  switch (node.kind) {
    case 'phrase':
      return node.phrase.tokens.length > 0 && present(node.phrase);
    case 'and':
      return node.children.every((c) => possible(c, present));
    case 'or':
      return node.children.some((c) => possible(c, present));
    case 'not':
      return possible(node.left, present);
  }
}

/** Phrases that can count for some message (not under a NOT's right side). */
export function countable(q: CompiledQuery): boolean[] {
  const out = q.phrases.map(() => false);
  const walk = (node: Node) => {
    if (node.kind === 'phrase') out[node.phrase.index] = true;
    else if (node.kind === 'not') walk(node.left);
    else for (const c of node.children) walk(c);
  };
  walk(q.tree);
  return out;
}

/** The best `limit` of scored messages, kept sorted (bm25 ascending, then id). */
/** Which of these messages may be on the page (the caller's filters); null: all of them. */
export type Accept = ((ids: number[]) => Promise<ReadonlySet<number>>) | null;

/**
 * The best `limit` of scored messages, kept sorted (bm25 ascending, then id). With an `accept` filter, a
 * message that would enter waits in `pending` until settle() asks the filter about all of those waiting at
 * once; only accepted ones enter. The threshold is that of the accepted ones, so it never overstates.
 */
export class TopK {
  ids: number[] = [];
  scores: number[] = [];
  private pending: { id: number; score: number }[] = [];
  constructor(
    private readonly limit: number,
    private readonly accept: Accept = null,
  ) {}

  get full(): boolean {
    return this.ids.length >= this.limit;
  }

  /** The score a message must beat or tie to enter (as a positive number: higher is better). */
  get threshold(): number {
    return this.full ? -this.scores[this.scores.length - 1]! : Number.NEGATIVE_INFINITY;
  }

  /** Whether enough messages wait to fill the page: time to ask the filter. */
  get wantsSettle(): boolean {
    return this.pending.length > 0 && this.pending.length >= this.limit - this.ids.length;
  }

  add(id: number, score: number): void {
    if (this.limit <= 0 || !this.enters(id, score)) return;
    if (this.accept === null) this.insert(id, score);
    else this.pending.push({ id, score });
  }

  /** Ask the filter about the waiting messages; the accepted ones enter. */
  async settle(): Promise<void> {
    if (this.pending.length === 0 || this.accept === null) return;
    const waiting = this.pending;
    this.pending = [];
    const ok = await this.accept(waiting.map((w) => w.id));
    for (const w of waiting) if (ok.has(w.id) && this.enters(w.id, w.score)) this.insert(w.id, w.score);
  }

  private enters(id: number, score: number): boolean {
    const n = this.ids.length;
    if (n < this.limit) return true;
    const worstScore = this.scores[n - 1]!;
    return score < worstScore || (score === worstScore && id < this.ids[n - 1]!);
  }

  private insert(id: number, score: number): void {
    const n = this.ids.length;
    let lo = 0;
    let hi = n;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      const s = this.scores[mid]!;
      if (s < score || (s === score && this.ids[mid]! < id)) lo = mid + 1;
      else hi = mid;
    }
    this.ids.splice(lo, 0, id);
    this.scores.splice(lo, 0, score);
    if (this.ids.length > this.limit) {
      this.ids.pop();
      this.scores.pop();
    }
  }
}

/** The first index of `ids` at or after `id` (ids ascending). */
export function lowerBound(ids: Float64Array, id: number, from = 0): number {
  let lo = from;
  let hi = ids.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (ids[mid]! < id) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** Read and decode (without positions) the blocks not read yet; returns how many were read. */
export async function readBlocks(reader: PostingsReader, blocks: Block[], pacer?: Pacer): Promise<number> {
  const missing = blocks.filter((b) => b.decoded === null);
  // Fetched and decoded a batch at a time: a prefix of common words reads hundreds of blocks.
  for (let at = 0; at < missing.length; at += READ_BATCH) {
    const batch = missing.slice(at, at + READ_BATCH);
    const data = await reader.read(batch);
    for (const [i, b] of batch.entries()) {
      b.data = data[i]!;
      b.decoded = decodeBlock(b.data, b.firstId, false);
      if (pacer?.due()) await pacer.pause();
    }
  }
  return missing.length;
}

/** Blocks fetched per read when a whole list is read (about 1 MB: each read is a round trip). */
const READ_BATCH = 256;

/**
 * Lets the event loop run during a long ranking: `due()` is cheap to ask in a loop, `pause()` yields once the
 * slice is used up. A ranking is CPU work between reads; over hundreds of blocks it would hold the loop.
 */
export class Pacer {
  private last = performance.now();
  constructor(private readonly sliceMs = 10) {}
  due(): boolean {
    return performance.now() - this.last >= this.sliceMs;
  }
  async pause(): Promise<void> {
    await yieldToEventLoop();
    this.last = performance.now();
  }
}

/** A block decoded with its positions (decoded again the first time a phrase needs them). */
export function withPositions(b: Block): DecodedBlock {
  if (b.decoded?.positions == null) b.decoded = decodeBlock(b.data!, b.firstId, true);
  return b.decoded;
}

/**
 * matches() for a query of at most 31 phrases, without an array: -1 when the query does not match, else the
 * phrases that count as bits (bit j: phrase j).
 */
export function countedMask(node: Node, freq: Float64Array): number {
  switch (node.kind) {
    case 'phrase':
      return node.phrase.tokens.length > 0 && freq[node.phrase.index]! > 0 ? 1 << node.phrase.index : -1;
    case 'and': {
      let mask = 0;
      for (const child of node.children) {
        const m = countedMask(child, freq);
        if (m < 0) return -1;
        mask |= m;
      }
      return mask;
    }
    case 'or': {
      let mask = -1;
      for (const child of node.children) {
        const m = countedMask(child, freq);
        if (m >= 0) mask = mask < 0 ? m : mask | m;
      }
      return mask;
    }
    case 'not': {
      const left = countedMask(node.left, freq);
      return left >= 0 && countedMask(node.right, freq) < 0 ? left : -1;
    }
  }
}

/** Scores a message into `top` when the query matches it: bm25 over the phrases FTS5 counts for it. */
export class Scorer {
  private readonly counts: number[];
  private readonly counted: number[] = [];
  private readonly masks: boolean;

  constructor(
    private readonly q: CompiledQuery,
    private readonly weights: { idf: number[]; avgdl: number },
  ) {
    this.counts = new Array<number>(q.phrases.length).fill(0);
    this.masks = q.phrases.length <= 31;
  }

  /** bm25 of a message with phrase frequencies `freq`, or null when the query does not match it. */
  score(freq: Float64Array, length: number): number | null {
    const counts = this.counts;
    counts.fill(0);
    if (this.masks) {
      const mask = countedMask(this.q.tree, freq);
      if (mask < 0) return null;
      for (let j = 0; j < counts.length; j++) if (mask & (1 << j)) counts[j] = freq[j]!;
    } else {
      this.counted.length = 0;
      if (!matches(this.q.tree, freq, this.counted)) return null;
      for (const j of this.counted) counts[j] = freq[j]!;
    }
    return bm25Score(counts, length, this.weights);
  }
}
