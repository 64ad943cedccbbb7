/**
 * One postings index (words or trigrams) as an engine keeps it, the FTS5 way: merged blocks per term
 * (postings-block.ts) plus a small recent segment of messages not merged yet, one row per message, written in
 * the message's own transaction (no contention on a term's last block). The merge folds the recent messages
 * into the blocks (postings-merge.ts); a removal rewrites the blocks holding the removed messages, so the
 * counts bm25 reads stay exact. A search reads both, through postingsReader. The engine supplies the storage
 * (PostingsStorage) and runs mergeRecent and removeMessages one at a time per index (a lock): each reads
 * what it changes before its commit. Everything here is the same on every engine.
 */
import type { IndexedText, Posting } from './postings.js';
import { type PostingsBlock, encodeBlocks } from './postings-block.js';
import { mergeTerm } from './postings-merge.js';
import type { BlockEntry, PostingsReader } from './rank-postings.js';

/** A message in the recent segment: its terms with their positions, and its length in tokens. */
export interface RecentMessage {
  id: number;
  indexed: IndexedText;
}

export interface Totals {
  messages: number;
  tokens: number;
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

/** Fold the recent segment (or its first `max` messages) into the blocks. Returns how many were folded. */
export async function mergeRecent(storage: PostingsStorage, max = Number.POSITIVE_INFINITY): Promise<number> {
  const recent = (await storage.recent()).slice(0, max);
  if (recent.length === 0) return 0;
  const lengths = new Map(recent.map((m) => [m.id, m.indexed.length]));
  const added = byTerm(recent);
  const stored = await storage.tails([...added.keys()], recent[0]!.id);
  const blocksOf = new Map<string, PostingsBlock[]>();
  for (const b of stored) blocksOf.set(b.term, [...(blocksOf.get(b.term) ?? []), b]);
  const changes: BlockChange[] = [];
  for (const [term, postings] of added) {
    const change = mergeTerm(term, blocksOf.get(term) ?? [], postings, (id) => lengths.get(id)!);
    changes.push({ term, ...change });
  }
  const tokens = recent.reduce((n, m) => n + m.indexed.length, 0);
  await storage.commit(
    changes,
    recent.map((m) => m.id),
    { messages: recent.length, tokens },
  );
  return recent.length;
}

/**
 * Remove messages from the index: those merged leave their blocks (only the blocks holding them are
 * rewritten), those still recent leave the segment. `messages` are the removed messages as the index holds
 * them (their text tokenized again: the index stores no forward list of merged messages).
 */
export async function removeMessages(storage: PostingsStorage, messages: readonly RecentMessage[]): Promise<void> {
  if (messages.length === 0) return;
  const recentIds = new Set((await storage.recent()).map((m) => m.id));
  const merged = messages.filter((m) => !recentIds.has(m.id));
  const gone = byTerm(merged);
  const places = [...gone].flatMap(([term, postings]) => postings.map((p) => ({ term, id: p.id })));
  const stored = places.length === 0 ? [] : await storage.holding(places);
  const blocksOf = new Map<string, PostingsBlock[]>();
  for (const b of stored) blocksOf.set(b.term, [...(blocksOf.get(b.term) ?? []), b]);
  const changes: BlockChange[] = [];
  for (const [term, postings] of gone) {
    const change = mergeTerm(term, blocksOf.get(term) ?? [], [], () => 0, new Set(postings.map((p) => p.id)));
    if (change.remove.length > 0 || change.write.length > 0) changes.push({ term, ...change });
  }
  const tokens = merged.reduce((n, m) => n + m.indexed.length, 0);
  await storage.commit(
    changes,
    messages.filter((m) => recentIds.has(m.id)).map((m) => m.id),
    { messages: -merged.length, tokens: -tokens },
  );
}

/**
 * What a search reads (rank-postings.ts): the merged blocks and the recent segment as one index. Recent
 * messages of a term become blocks in memory; one whose id falls inside a merged block (a message that
 * committed late) is merged with that block in memory, so a term's blocks never overlap.
 */
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
  /** Blocks built here, served from memory by read(). */
  const inMemory = new Map<string, Uint8Array>();
  const key = (b: { term: string; firstId: number }) => `${b.firstId}\u0000${b.term}`;
  return {
    async blocks(terms, prefixes) {
      const [{ recent }, listed] = await Promise.all([state(), storage.list(terms, prefixes)]);
      const wanted = (term: string) => terms.includes(term) || prefixes.some((p) => term.startsWith(p));
      const lengths = new Map(recent.map((m) => [m.id, m.indexed.length]));
      const added = new Map([...byTerm(recent)].filter(([term]) => wanted(term)));
      const out: BlockEntry[] = [];
      const listedOf = new Map<string, BlockEntry[]>();
      for (const e of listed) listedOf.set(e.term, [...(listedOf.get(e.term) ?? []), e]);
      for (const [term, entries] of listedOf) if (!added.has(term)) out.push(...entries);
      for (const [term, postings] of added) {
        const entries = listedOf.get(term) ?? [];
        // Merged blocks a recent id falls inside or before: merged with the recent postings in memory.
        const first = postings[0]!.id;
        const overlapped = entries.filter((e) => e.lastId >= first);
        out.push(...entries.filter((e) => e.lastId < first));
        const data = overlapped.length === 0 ? [] : await storage.read(overlapped);
        const stored = overlapped.map((e, i) => ({ ...e, data: data[i]! }));
        const merged = mergeTerm(term, stored, postings, (id) => lengths.get(id)!);
        const blocks =
          stored.length === 0
            ? encodeBlocks(term, postings, (id) => lengths.get(id)!)
            : [...stored.filter((b) => !merged.remove.includes(b.firstId)), ...merged.write];
        for (const b of blocks) {
          inMemory.set(key(b), b.data);
          out.push({ term: b.term, firstId: b.firstId, lastId: b.lastId, count: b.count, bound: b.bound });
        }
      }
      return out;
    },
    async read(blocks) {
      const fromStorage = blocks.filter((b) => !inMemory.has(key(b)));
      const data = fromStorage.length === 0 ? [] : await storage.read(fromStorage);
      const stored = new Map(fromStorage.map((b, i) => [key(b), data[i]!]));
      return blocks.map((b) => inMemory.get(key(b)) ?? stored.get(key(b))!);
    },
    async totals() {
      return (await state()).totals;
    },
  };
}
