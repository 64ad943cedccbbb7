/**
 * One postings index (words or trigrams) as an engine keeps it, the FTS5 way: merged blocks per term
 * (postings-block.ts) plus a small recent segment of messages not merged yet, one row per message, written in
 * the message's own transaction (no contention on a term's last block). The merge folds the recent messages
 * into the blocks (postings-merge.ts); a removal rewrites the blocks holding the removed messages, so the
 * counts bm25 reads stay exact. A search reads both, through postingsReader.
 *
 * The planners (planMerge, planRemoval, combine) are pure, so an engine can call them between the statements
 * of its own transaction (a removal inside the transaction that deletes the messages). mergeRecent,
 * removeMessages and postingsReader run them over a PostingsStorage; an engine runs merges and removals one at
 * a time per index (a lock): each reads what it changes before its commit. Everything here is the same on
 * every engine.
 */
import type { IndexedText, Posting } from './postings.js';
import type { PostingsBlock } from './postings-block.js';
import { mergeTerm } from './postings-merge.js';
import type { BlockEntry, PostingsReader, Totals } from './rank-postings.js';

/** A message in the recent segment: its terms with their positions, and its length in tokens. */
export interface RecentMessage {
  id: number;
  indexed: IndexedText;
}

/** One term's change: blocks to delete (by first id) and blocks to write. */
export interface BlockChange {
  term: string;
  remove: number[];
  write: PostingsBlock[];
}

/** Where an engine keeps one index. Each method is one statement or one transaction. */
export interface PostingsStorage {
  /** Merged blocks (without data) of these terms, and of every term starting with one of the prefixes. */
  list(terms: readonly string[], prefixes: readonly string[]): Promise<BlockEntry[]>;
  /** The data of these merged blocks, in the same order. */
  read(blocks: readonly BlockEntry[]): Promise<Uint8Array[]>;
  /** Per term: its merged blocks (with data) ending at or after `fromId`, and its last block. */
  tails(terms: readonly string[], fromId: number): Promise<PostingsBlock[]>;
  /** Merged blocks (with data) whose id range holds one of these (term, id) places. */
  holding(places: readonly { term: string; id: number }[]): Promise<PostingsBlock[]>;
  /** The recent segment, ids ascending. */
  recent(): Promise<RecentMessage[]>;
  /** Messages and tokens in the merged blocks. */
  mergedTotals(): Promise<Totals>;
  /**
   * In one transaction: apply the block changes, delete these messages from the recent segment, and add
   * `totals` (signed) to the merged totals.
   */
  commit(changes: readonly BlockChange[], fromRecent: readonly number[], totals: Totals): Promise<void>;
}

/**
 * The first string after every string that starts with `prefix` in code point order (an engine's key range
 * for a prefix query: terms stored as UTF-8 bytes sort in code point order), or null when there is none.
 */
export function prefixEnd(prefix: string): string | null {
  const chars = [...prefix];
  const last = chars.pop()?.codePointAt(0);
  if (last === undefined || last >= 0x10ffff) return null;
  return chars.join('') + String.fromCodePoint(last + 1 === 0xd800 ? 0xe000 : last + 1);
}

/** Group messages' postings by term, ids ascending. */
function byTerm(messages: readonly RecentMessage[]): Map<string, Posting[]> {
  const out = new Map<string, Posting[]>();
  for (const m of [...messages].sort((a, b) => a.id - b.id))
    for (const [term, positions] of m.indexed.terms) {
      const list = out.get(term);
      if (list) list.push({ id: m.id, positions });
      else out.set(term, [{ id: m.id, positions }]);
    }
  return out;
}

function groupBlocks(blocks: readonly PostingsBlock[]): Map<string, PostingsBlock[]> {
  const out = new Map<string, PostingsBlock[]>();
  for (const b of blocks) {
    const list = out.get(b.term);
    if (list) list.push(b);
    else out.set(b.term, [b]);
  }
  return out;
}

/** What one merge or removal changes, for the engine to commit in one transaction. */
export interface IndexChange {
  changes: BlockChange[];
  /** Messages leaving the recent segment. */
  fromRecent: number[];
  /** Signed change of the merged totals. */
  totals: Totals;
}

// The planners below are pure: an engine reads what they name (in its own transaction, between its own
// statements), calls them, and writes what they return. mergeRecent, removeMessages and postingsReader run
// them over a PostingsStorage.

/** The terms a merge of these messages touches (the engine reads their tails: PostingsStorage.tails). */
export function termsOf(messages: readonly RecentMessage[]): string[] {
  const terms = new Set<string>();
  for (const m of messages) for (const term of m.indexed.terms.keys()) terms.add(term);
  return [...terms];
}

/** Fold `recent` messages into the blocks, given the tails of their terms (from the smallest recent id). */
export function planMerge(recent: readonly RecentMessage[], tails: readonly PostingsBlock[]): IndexChange {
  const lengths = new Map(recent.map((m) => [m.id, m.indexed.length]));
  const blocksOf = groupBlocks(tails);
  const changes: BlockChange[] = [];
  for (const [term, postings] of byTerm(recent))
    changes.push({ term, ...mergeTerm(term, blocksOf.get(term) ?? [], postings, (id) => lengths.get(id)!) });
  const tokens = recent.reduce((n, m) => n + m.indexed.length, 0);
  return { changes, fromRecent: recent.map((m) => m.id), totals: { messages: recent.length, tokens } };
}

/** The (term, id) places of removed messages that are merged (the engine reads the blocks holding them). */
export function removalPlaces(removed: readonly RecentMessage[], recentIds: ReadonlySet<number>) {
  return [...byTerm(removed.filter((m) => !recentIds.has(m.id)))].flatMap(([term, postings]) =>
    postings.map((p) => ({ term, id: p.id })),
  );
}

/**
 * Remove messages (as the index holds them: their text tokenized again) given which ids are still recent and
 * the merged blocks holding the others: those merged leave their blocks, those recent leave the segment.
 */
export function planRemoval(
  removed: readonly RecentMessage[],
  recentIds: ReadonlySet<number>,
  holding: readonly PostingsBlock[],
): IndexChange {
  const merged = removed.filter((m) => !recentIds.has(m.id));
  const blocksOf = groupBlocks(holding);
  const changes: BlockChange[] = [];
  for (const [term, postings] of byTerm(merged)) {
    const gone = new Set(postings.map((p) => p.id));
    const change = mergeTerm(term, blocksOf.get(term) ?? [], [], () => 0, gone);
    if (change.remove.length > 0 || change.write.length > 0) changes.push({ term, ...change });
  }
  const tokens = merged.reduce((n, m) => n + m.indexed.length, 0);
  return {
    changes,
    fromRecent: removed.filter((m) => recentIds.has(m.id)).map((m) => m.id),
    totals: { messages: -merged.length, tokens: -tokens },
  };
}

/** A search's view of one index: merged blocks and recent messages as one list of blocks per term. */
export interface CombinedBlocks {
  entries: BlockEntry[];
  /** Data of the blocks built in memory, by blockKey. */
  inMemory: Map<string, Uint8Array>;
}

export const blockKey = (b: { term: string; firstId: number }) => `${b.firstId}\u0000${b.term}`;

/** Each block once (an engine listing a query's terms and prefixes finds a block under both). */
export function uniqueBlocks<B extends { term: string; firstId: number }>(blocks: readonly B[]): B[] {
  const seen = new Set<string>();
  return blocks.filter((b) => {
    const key = blockKey(b);
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

/** What a query sees of the recent segment: its terms' postings there, and those messages' lengths. */
export interface RecentView {
  postings: Map<string, Posting[]>;
  lengths: Map<number, number>;
}

/** The recent segment as a query sees it: only its terms and prefixes are grouped, once per query. */
export function recentView(
  recent: readonly RecentMessage[],
  terms: readonly string[],
  prefixes: readonly string[],
): RecentView {
  const exact = new Set(terms);
  const wanted = (term: string) => exact.has(term) || prefixes.some((p) => term.startsWith(p));
  const postings = new Map<string, Posting[]>();
  const lengths = new Map<number, number>();
  for (const m of [...recent].sort((a, b) => a.id - b.id))
    for (const [term, positions] of m.indexed.terms) {
      if (!wanted(term)) continue;
      lengths.set(m.id, m.indexed.length);
      const list = postings.get(term);
      if (list) list.push({ id: m.id, positions });
      else postings.set(term, [{ id: m.id, positions }]);
    }
  return { postings, lengths };
}

/** The merged blocks a search must read the data of to combine them with recent messages (late commits). */
export function overlappedBlocks(listed: readonly BlockEntry[], view: RecentView): BlockEntry[] {
  return listed.filter((e) => {
    const postings = view.postings.get(e.term);
    return postings !== undefined && e.lastId >= postings[0]!.id;
  });
}

/**
 * Merged blocks and recent messages as one index: a term's recent postings become blocks in memory, merged
 * with the merged blocks they fall inside or before (`overlapped`, with their data), so a term's blocks never
 * overlap.
 */
export function combine(
  listed: readonly BlockEntry[],
  view: RecentView,
  overlapped: readonly PostingsBlock[],
): CombinedBlocks {
  const overlappedOf = groupBlocks(overlapped);
  const replaced = new Set(overlapped.map(blockKey));
  const entries = listed.filter((e) => !replaced.has(blockKey(e)));
  const inMemory = new Map<string, Uint8Array>();
  for (const [term, postings] of view.postings) {
    const stored = overlappedOf.get(term) ?? [];
    const merged = mergeTerm(term, stored, postings, (id) => view.lengths.get(id)!);
    const blocks = [...stored.filter((b) => !merged.remove.includes(b.firstId)), ...merged.write];
    for (const b of blocks) {
      inMemory.set(blockKey(b), b.data);
      entries.push({ term: b.term, firstId: b.firstId, lastId: b.lastId, count: b.count, bound: b.bound });
    }
  }
  return { entries, inMemory };
}

// --- over a PostingsStorage --------------------------------------------------------------------------------

/** Fold the recent segment (or its first `max` messages) into the blocks. Returns how many were folded. */
export async function mergeRecent(storage: PostingsStorage, max = Number.POSITIVE_INFINITY): Promise<number> {
  const recent = (await storage.recent()).slice(0, max);
  if (recent.length === 0) return 0;
  const plan = planMerge(recent, await storage.tails(termsOf(recent), recent[0]!.id));
  await storage.commit(plan.changes, plan.fromRecent, plan.totals);
  return recent.length;
}

/** Remove messages from the index (see planRemoval). */
export async function removeMessages(storage: PostingsStorage, messages: readonly RecentMessage[]): Promise<void> {
  if (messages.length === 0) return;
  const recentIds = new Set((await storage.recent()).map((m) => m.id));
  const places = removalPlaces(messages, recentIds);
  const plan = planRemoval(messages, recentIds, places.length === 0 ? [] : await storage.holding(places));
  await storage.commit(plan.changes, plan.fromRecent, plan.totals);
}

/** What a search reads (rank-postings.ts): the merged blocks and the recent segment as one index (combine). */
export function postingsReader(storage: PostingsStorage): PostingsReader {
  let snapshot: Promise<{ recent: RecentMessage[]; totals: Totals }> | null = null;
  const state = () => {
    snapshot ??= (async () => {
      const [recent, merged] = await Promise.all([storage.recent(), storage.mergedTotals()]);
      const tokens = recent.reduce((n, m) => n + m.indexed.length, 0);
      return { recent, totals: { messages: merged.messages + recent.length, tokens: merged.tokens + tokens } };
    })();
    return snapshot;
  };
  const inMemory = new Map<string, Uint8Array>();
  return {
    async blocks(terms, prefixes) {
      const [{ recent }, listed] = await Promise.all([state(), storage.list(terms, prefixes)]);
      const view = recentView(recent, terms, prefixes);
      const overlapped = overlappedBlocks(listed, view);
      const data = overlapped.length === 0 ? [] : await storage.read(overlapped);
      const combined = combine(
        listed,
        view,
        overlapped.map((e, i) => ({ ...e, data: data[i]! })),
      );
      for (const [k, d] of combined.inMemory) inMemory.set(k, d);
      return combined.entries;
    },
    async read(blocks) {
      const fromStorage = blocks.filter((b) => !inMemory.has(blockKey(b)));
      const data = fromStorage.length === 0 ? [] : await storage.read(fromStorage);
      const stored = new Map(fromStorage.map((b, i) => [blockKey(b), data[i]!]));
      return blocks.map((b) => inMemory.get(blockKey(b)) ?? stored.get(blockKey(b))!);
    },
    async totals() {
      return (await state()).totals;
    },
  };
}
