/**
 * A PostingsStorage kept in memory (src/search/postings-index.ts): what an engine's tables hold, as maps, so
 * the index's own logic is tested against FTS5 without a server. Each method does what the interface says
 * and nothing more.
 */
import type { PostingsBlock } from '../../src/search/postings-block.js';
import { decodeIndexed, encodeIndexed } from '../../src/search/postings.js';
import type { BlockChange, PostingsStorage, RecentMessage } from '../../src/search/postings-index.js';
import type { BlockEntry, Totals } from '../../src/search/rank-postings.js';

export class MemoryPostingsStorage implements PostingsStorage {
  /** term -> first id -> block */
  readonly blocks = new Map<string, Map<number, PostingsBlock>>();
  /**
   * The recent segment: each message goes through its stored form (encodeIndexed) once, on append; what a
   * search reads is the decoded message (an engine would cache it the same way rather than decode the segment
   * for every query).
   */
  readonly recentMessages = new Map<number, RecentMessage>();
  private merged: Totals = { messages: 0, tokens: 0 };

  /** What an append writes in the message's own transaction. */
  append(message: RecentMessage): void {
    this.recentMessages.set(message.id, { id: message.id, indexed: decodeIndexed(encodeIndexed(message.indexed)) });
  }

  private all(term: string): PostingsBlock[] {
    return [...(this.blocks.get(term)?.values() ?? [])].sort((a, b) => a.firstId - b.firstId);
  }

  async list(terms: readonly string[], prefixes: readonly string[]): Promise<BlockEntry[]> {
    const out: BlockEntry[] = [];
    for (const [term, byFirst] of this.blocks)
      if (terms.includes(term) || prefixes.some((p) => term.startsWith(p)))
        for (const { data: _, ...entry } of byFirst.values()) out.push(entry);
    return out;
  }

  async read(blocks: readonly BlockEntry[]): Promise<Uint8Array[]> {
    return blocks.map((b) => this.blocks.get(b.term)!.get(b.firstId)!.data);
  }

  async tails(terms: readonly string[], fromId: number): Promise<PostingsBlock[]> {
    return terms.flatMap((term) => {
      const all = this.all(term);
      return all.filter((b, i) => b.lastId >= fromId || i === all.length - 1);
    });
  }

  async holding(places: readonly { term: string; id: number }[]): Promise<PostingsBlock[]> {
    const out = new Set<PostingsBlock>();
    for (const { term, id } of places)
      for (const b of this.all(term)) if (id >= b.firstId && id <= b.lastId) out.add(b);
    return [...out];
  }

  async recent(): Promise<RecentMessage[]> {
    return [...this.recentMessages.values()].sort((a, b) => a.id - b.id);
  }

  async mergedTotals(): Promise<Totals> {
    return { ...this.merged };
  }

  async commit(changes: readonly BlockChange[], fromRecent: readonly number[], totals: Totals): Promise<void> {
    for (const { term, remove, write } of changes) {
      const byFirst = this.blocks.get(term) ?? new Map<number, PostingsBlock>();
      for (const first of remove) byFirst.delete(first);
      for (const b of write) {
        if (byFirst.has(b.firstId)) throw new Error(`block ${term}@${b.firstId} written twice`);
        byFirst.set(b.firstId, b);
      }
      if (byFirst.size === 0) this.blocks.delete(term);
      else this.blocks.set(term, byFirst);
    }
    for (const id of fromRecent) this.recentMessages.delete(id);
    this.merged = { messages: this.merged.messages + totals.messages, tokens: this.merged.tokens + totals.tokens };
  }
}
