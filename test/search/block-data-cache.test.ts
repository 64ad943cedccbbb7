/** The block data cache: reads what it lacks once, keeps what fits, drops the least recently used first. */
import { describe, expect, it } from 'vitest';
import { BlockDataCache } from '../../src/search/block-data-cache.js';
import type { BlockEntry } from '../../src/search/rank-postings.js';

const block = (term: string, firstId: number): BlockEntry => ({
  term,
  firstId,
  lastId: firstId,
  count: 1,
  bound: new Uint8Array(0),
});
const bytes = (n: number, fill: number) => new Uint8Array(n).fill(fill);

describe('BlockDataCache', () => {
  it('fetches only the blocks it does not hold, in their order, and never caches a block without a key', async () => {
    const cache = new BlockDataCache(1_000);
    const fetched: string[] = [];
    const fetch = async (missing: BlockEntry[]) => {
      fetched.push(...missing.map((b) => b.term));
      return missing.map((b) => bytes(10, b.firstId));
    };
    const keyOf = (b: BlockEntry) => (b.term === 'unversioned' ? null : `${b.term}@${b.firstId}`);
    const first = await cache.read([block('a', 1), block('b', 2), block('unversioned', 3)], keyOf, fetch);
    expect(first.map((d) => d[0])).toEqual([1, 2, 3]);
    const second = await cache.read(
      [block('unversioned', 3), block('b', 2), block('c', 4), block('a', 1)],
      keyOf,
      fetch,
    );
    expect(second.map((d) => d[0])).toEqual([3, 2, 4, 1]);
    expect(fetched).toEqual(['a', 'b', 'unversioned', 'unversioned', 'c']);
  });

  it('drops the least recently used once over its byte limit, and skips data larger than the limit', () => {
    const cache = new BlockDataCache(100);
    cache.set('a', bytes(40, 1));
    cache.set('b', bytes(40, 2));
    expect(cache.get('a')?.[0]).toBe(1); // a is now the most recently used
    cache.set('c', bytes(40, 3)); // 120 bytes: b goes
    expect(cache.get('b')).toBeUndefined();
    expect(cache.get('a')?.[0]).toBe(1);
    expect(cache.get('c')?.[0]).toBe(3);
    cache.set('huge', bytes(101, 4));
    expect(cache.get('huge')).toBeUndefined();
    cache.set('a', bytes(60, 5)); // replacing a counts its new size only: 60 + 40
    expect(cache.get('a')?.[0]).toBe(5);
    expect(cache.get('c')?.[0]).toBe(3);
  });
});
