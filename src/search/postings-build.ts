/**
 * An index built in one pass from messages in id order (an import, or a store's first index): each term's
 * postings gathered in flat arrays, then cut into blocks (postings-block.ts). What a merge does message by
 * message, without rewriting any block: the way to index many messages at once.
 */
import { type PostingsBlock, encodeBlocks } from './postings-block.js';
import type { IndexedText, Posting } from './postings.js';

interface TermList {
  ids: number[];
  counts: number[];
  positions: number[];
}

export class PostingsBuilder {
  private readonly lists = new Map<string, TermList>();
  private readonly lengths = new Map<number, number>();
  private lastId = Number.NEGATIVE_INFINITY;
  /** Tokens of every message added (bm25's corpus total). */
  tokens = 0;

  /** Messages added. */
  get messages(): number {
    return this.lengths.size;
  }

  /** Add a message; ids must ascend. */
  add(id: number, indexed: IndexedText): void {
    if (id <= this.lastId) throw new RangeError(`postings build: id ${id} does not follow ${this.lastId}`);
    this.lastId = id;
    this.lengths.set(id, indexed.length);
    this.tokens += indexed.length;
    for (const [term, positions] of indexed.terms) {
      let list = this.lists.get(term);
      if (!list) {
        list = { ids: [], counts: [], positions: [] };
        this.lists.set(term, list);
      }
      list.ids.push(id);
      list.counts.push(positions.length);
      for (const p of positions) list.positions.push(p);
    }
  }

  /**
   * The blocks, in batches of about `batchBytes` of data, terms in order (a table keyed by term then first id
   * fills its pages in order). Each term's list is released once cut.
   */
  *blocks(batchBytes = 4 * 2 ** 20): Generator<PostingsBlock[]> {
    const lengthOf = (id: number) => this.lengths.get(id) ?? 0;
    let batch: PostingsBlock[] = [];
    let bytes = 0;
    for (const term of [...this.lists.keys()].sort()) {
      const list = this.lists.get(term)!;
      this.lists.delete(term);
      const postings: Posting[] = new Array(list.ids.length);
      let at = 0;
      for (let k = 0; k < list.ids.length; k++) {
        postings[k] = { id: list.ids[k]!, positions: list.positions.slice(at, at + list.counts[k]!) };
        at += list.counts[k]!;
      }
      for (const block of encodeBlocks(term, postings, lengthOf)) {
        batch.push(block);
        bytes += block.data.length + block.term.length + 32;
      }
      if (bytes >= batchBytes) {
        yield batch;
        batch = [];
        bytes = 0;
      }
    }
    if (batch.length > 0) yield batch;
  }
}
