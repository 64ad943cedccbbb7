/**
 * Ranking every match (rank-postings.ts), for phrases of several words and prefixes: their IDFs count the
 * messages they occur in, which only their whole lists tell, so every block is read and every match scored.
 */
import { bm25Weights } from './bm25.js';
import type { RankedPostings } from './rank-postings.js';
import { type Block, type RankInput, Scorer, TopK, lowerBound, readBlocks, withPositions } from './rank-shared.js';

/** A cursor over a term's whole list (its blocks one after the other), moved forward only. */
class TermCursor {
  private block = 0;
  private at = 0;
  constructor(readonly blocks: readonly Block[]) {}

  /** Where message `id` sits in the list (block and index), or null; ids asked for must not decrease. */
  seek(id: number): { block: Block; at: number } | null {
    while (this.block < this.blocks.length) {
      const block = this.blocks[this.block]!;
      if (block.lastId >= id) {
        if (block.firstId > id) return null;
        this.at = lowerBound(block.decoded!.ids, id, this.at);
        return block.decoded!.ids[this.at] === id ? { block, at: this.at } : null;
      }
      this.block++;
      this.at = 0;
    }
    return null;
  }
}

/** Ascending ids of sorted, disjoint blocks, one after the other. */
function idsOf(blocks: readonly Block[]): Float64Array {
  let n = 0;
  for (const b of blocks) n += b.decoded!.ids.length;
  const out = new Float64Array(n);
  n = 0;
  for (const b of blocks) {
    out.set(b.decoded!.ids, n);
    n += b.decoded!.ids.length;
  }
  return out;
}

/** The ids in any of the ascending lists, ascending, once each. */
function union(lists: readonly Float64Array[]): Float64Array {
  if (lists.length === 1) return lists[0]!;
  let n = 0;
  for (const l of lists) n += l.length;
  const all = new Float64Array(n);
  n = 0;
  for (const l of lists) {
    all.set(l, n);
    n += l.length;
  }
  all.sort();
  let k = 0;
  for (let i = 0; i < all.length; i++) if (i === 0 || all[i] !== all[i - 1]) all[k++] = all[i]!;
  return all.subarray(0, k);
}

/** The ids in both ascending lists: each id of the shorter looked up in the longer, from where the last was. */
function intersect(a: Float64Array, b: Float64Array): Float64Array {
  const [short, long] = a.length <= b.length ? [a, b] : [b, a];
  const out = new Float64Array(short.length);
  let k = 0;
  let from = 0;
  if (long.length <= 8 * short.length) {
    // Lists of like sizes: one walk along both.
    for (const id of short) {
      while (from < long.length && long[from]! < id) from++;
      if (from >= long.length) break;
      if (long[from] === id) out[k++] = id;
    }
    return out.subarray(0, k);
  }
  for (const id of short) {
    from = lowerBound(long, id, from);
    if (from >= long.length) break;
    if (long[from] === id) out[k++] = id;
  }
  return out.subarray(0, k);
}

export async function everyMatch(input: RankInput): Promise<Omit<RankedPostings, 'blocksListed'>> {
  const { q, slots, blocksOfTerm, reader, totals, limit, accept, pacer } = input;
  let floor = input.floor ?? Number.NEGATIVE_INFINITY;
  const blocksRead = await readBlocks(reader, blocksOfTerm.flat(), pacer);

  // The messages to look at: those in which some phrase can occur (all of its words are there).
  const termIds = new Map<number, Float64Array>();
  const idsOfTerm = (t: number) => {
    let ids = termIds.get(t);
    if (!ids) {
      ids = idsOf(blocksOfTerm[t]!);
      termIds.set(t, ids);
    }
    return ids;
  };
  const nPhrase = q.phrases.length;
  const candidatesOf: (Float64Array | null)[] = q.phrases.map((p, j) => {
    if (p.tokens.length === 0) return null;
    let ids: Float64Array | null = null;
    for (const slot of slots[j]!) {
      const here = union(slot.map(idsOfTerm));
      ids = ids === null ? here : intersect(ids, here);
    }
    return ids;
  });
  const listed = candidatesOf.filter((c): c is Float64Array => c !== null);
  const every = listed.length === 0 ? new Float64Array(0) : union(listed);
  const n = every.length;

  // Each phrase's count in each message, term list by term list (not message by message over every term: a
  // prefix can stand for hundreds of terms).
  const lengths = new Uint32Array(n);
  const freq: Float64Array[] = q.phrases.map(() => new Float64Array(n));
  const phrasesOfTerm = new Map<number, number[]>();
  for (const [j, p] of q.phrases.entries())
    if (p.tokens.length === 1)
      for (const t of slots[j]![0]!) phrasesOfTerm.set(t, [...(phrasesOfTerm.get(t) ?? []), j]);
  for (const [t, blocks] of blocksOfTerm.entries()) {
    const single = phrasesOfTerm.get(t) ?? [];
    let at = 0;
    for (const b of blocks) {
      const { ids, frequencies, lengths: ls } = b.decoded!;
      for (let i = 0; i < ids.length; i++) {
        const id = ids[i]!;
        while (at < n && every[at]! < id) at++;
        if (at >= n) break;
        if (every[at] !== id) continue;
        lengths[at] = ls[i]!;
        for (const j of single) freq[j]![at]! += frequencies[i]!;
      }
      if (pacer?.due()) await pacer.pause();
    }
  }
  // Phrases of two or more words: positions, in the messages holding all of their words.
  for (const [j, p] of q.phrases.entries()) {
    if (p.tokens.length < 2) continue;
    const counter = new PhraseCounter(slots[j]!.map((slot) => slot.map((t) => new TermCursor(blocksOfTerm[t]!))));
    let at = 0;
    for (const [k, id] of candidatesOf[j]!.entries()) {
      while (every[at]! < id) at++;
      freq[j]![at] = counter.count(id);
      if (k % 1024 === 0 && pacer?.due()) await pacer.pause();
    }
  }

  const hits = freq.map((f) => f.reduce((h, x) => (x > 0 ? h + 1 : h), 0));
  const weights = bm25Weights({ rows: totals.messages, tokens: totals.tokens, hits });
  const scorer = new Scorer(q, weights);
  const here = new Float64Array(nPhrase);
  const scoreAt = (m: number): number | null => {
    // Below the rank window's floor a message counts toward bm25's IDF, but is not ranked.
    if (every[m]! < floor) return null;
    for (let j = 0; j < nPhrase; j++) here[j] = freq[j]![m]!;
    return scorer.score(here, lengths[m]!);
  };
  // The rank window: only the newest `window` matches (filters applied) are ranked when there are more.
  let capped = false;
  if (input.window !== undefined && input.window <= n) {
    let found = 0;
    let pending: number[] = [];
    const settle = async () => {
      const ok = accept === null ? null : await accept(pending);
      for (const id of pending)
        if ((ok === null || ok.has(id)) && ++found === input.window) {
          floor = id;
          capped = true;
          break;
        }
      pending = [];
    };
    for (let m = n - 1; m >= 0 && !capped; m--) {
      if (scoreAt(m) === null) continue;
      pending.push(every[m]!);
      if (pending.length >= (accept === null ? 1 : 512)) await settle();
      if (m % 4096 === 0 && pacer?.due()) await pacer.pause();
    }
    if (!capped && pending.length > 0) await settle();
  }
  if (accept === null && Number.isFinite(limit)) {
    // A page: kept best first as the matches go by, without sorting them all.
    const top = new TopK(limit);
    for (let m = 0; m < n; m++) {
      const score = scoreAt(m);
      if (score !== null) top.add(every[m]!, score);
      if (m % 4096 === 0 && pacer?.due()) await pacer.pause();
    }
    return { ids: top.ids, scores: top.scores, blocksRead, capped };
  }
  // Typed arrays: pushing 100,000 scores onto an array costs more than computing them.
  const matchIds = new Float64Array(n);
  const matchScores = new Float64Array(n);
  let matched = 0;
  for (let m = 0; m < n; m++) {
    if (m % 4096 === 0 && pacer?.due()) await pacer.pause();
    const score = scoreAt(m);
    if (score === null) continue;
    matchIds[matched] = every[m]!;
    matchScores[matched++] = score;
  }
  // Every match without a filter, for a caller that orders them itself (by time): in id order, unsorted.
  if (input.unordered && accept === null && !Number.isFinite(limit))
    return {
      ids: [],
      scores: [],
      byId: { ids: matchIds.subarray(0, matched), scores: matchScores.subarray(0, matched) },
      blocksRead,
      capped,
    };
  // Best first; the filter is asked about the best ones a chunk at a time until the page is full.
  const order = new Uint32Array(matched);
  for (let k = 0; k < matched; k++) order[k] = k;
  order.sort((a, b) => matchScores[a]! - matchScores[b]! || matchIds[a]! - matchIds[b]!);
  const ids: number[] = [];
  const scores: number[] = [];
  for (let at = 0; at < order.length && ids.length < limit; ) {
    const chunk = order.subarray(
      at,
      at + (accept === null ? limit - ids.length : Math.max(2 * (limit - ids.length), 100)),
    );
    at += chunk.length;
    const ok = accept === null ? null : await accept(Array.from(chunk, (k) => matchIds[k]!));
    for (const k of chunk)
      if (ids.length < limit && (ok === null || ok.has(matchIds[k]!))) {
        ids.push(matchIds[k]!);
        scores.push(matchScores[k]!);
      }
  }
  return { ids, scores, blocksRead, capped };
}

/**
 * How often a phrase occurs in a message: its words at consecutive positions (a slot: the terms a word stands
 * for, several for a prefix). Ids asked for ascend. Each word's positions are read in place from its block.
 */
class PhraseCounter {
  private readonly lists: ArrayLike<number>[];
  private readonly from: Int32Array;
  private readonly to: Int32Array;
  private readonly at: Int32Array;

  constructor(private readonly slots: TermCursor[][]) {
    this.lists = slots.map(() => []);
    this.from = new Int32Array(slots.length);
    this.to = new Int32Array(slots.length);
    this.at = new Int32Array(slots.length);
  }

  /** Point slot k at its positions in message `id`; false when none of its terms is there. */
  private place(k: number, id: number): boolean {
    const cursors = this.slots[k]!;
    if (cursors.length === 1) {
      const found = cursors[0]!.seek(id);
      if (found === null) return false;
      const b = withPositions(found.block);
      this.lists[k] = b.positions!;
      this.from[k] = b.starts![found.at]!;
      this.to[k] = b.starts![found.at + 1]!;
      return true;
    }
    const merged: number[] = [];
    for (const c of cursors) {
      const found = c.seek(id);
      if (found === null) continue;
      const b = withPositions(found.block);
      for (let x = b.starts![found.at]!; x < b.starts![found.at + 1]!; x++) merged.push(b.positions![x]!);
    }
    if (merged.length === 0) return false;
    merged.sort((a, b) => a - b);
    this.lists[k] = merged;
    this.from[k] = 0;
    this.to[k] = merged.length;
    return true;
  }

  count(id: number): number {
    const n = this.slots.length;
    // A cursor left behind here catches up on its next seek (they only go forward).
    for (let k = 0; k < n; k++) if (!this.place(k, id)) return 0;
    for (let k = 1; k < n; k++) this.at[k] = this.from[k]!;
    const first = this.lists[0]!;
    let count = 0;
    for (let x = this.from[0]!; x < this.to[0]!; x++) {
      const start = first[x]!;
      let matched = true;
      for (let k = 1; k < n; k++) {
        const list = this.lists[k]!;
        const want = start + k;
        let y = this.at[k]!;
        const end = this.to[k]!;
        while (y < end && list[y]! < want) y++;
        this.at[k] = y;
        if (y >= end) return count;
        if (list[y] !== want) {
          matched = false;
          break;
        }
      }
      if (matched) count++;
    }
    return count;
  }
}
