/**
 * Block data a process keeps between searches: the blocks of common words are read by most queries. Keyed by
 * the engine's row version of each block, so a block a merge or removal rewrote is read again; least recently
 * used dropped first once over its byte limit.
 */
import type { BlockEntry } from './rank-postings.js';

export class BlockDataCache {
  private readonly entries = new Map<string, Uint8Array>();
  private bytes = 0;
  constructor(private readonly limit: number) {}

  get(key: string): Uint8Array | undefined {
    const data = this.entries.get(key);
    if (data !== undefined) {
      this.entries.delete(key);
      this.entries.set(key, data);
    }
    return data;
  }

  set(key: string, data: Uint8Array): void {
    if (data.length > this.limit) return;
    const old = this.entries.get(key);
    if (old !== undefined) this.bytes -= old.length;
    this.entries.delete(key);
    this.entries.set(key, data);
    this.bytes += data.length;
    for (const [k, d] of this.entries) {
      if (this.bytes <= this.limit) break;
      this.entries.delete(k);
      this.bytes -= d.length;
    }
  }

  /**
   * The data of `blocks`, in their order: cached ones from memory, the rest through `fetch` (then cached).
   * `keyOf` gives a block's key, or null for a block without a version (never cached).
   */
  async read(
    blocks: readonly BlockEntry[],
    keyOf: (b: BlockEntry) => string | null,
    fetch: (missing: BlockEntry[]) => Promise<Uint8Array[]>,
  ): Promise<Uint8Array[]> {
    const keys = blocks.map(keyOf);
    const cached = keys.map((key) => (key === null ? undefined : this.get(key)));
    const missing = blocks.filter((_, i) => cached[i] === undefined);
    const fetched = missing.length === 0 ? [] : await fetch(missing);
    let next = 0;
    return blocks.map((_, i) => {
      if (cached[i] !== undefined) return cached[i]!;
      const data = fetched[next++]!;
      if (keys[i] !== null) this.set(keys[i]!, data);
      return data;
    });
  }
}
