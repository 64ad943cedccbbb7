/**
 * An index built in one pass from messages in id order (an import, or a store's first index): every posting
 * appended to flat typed arrays, then grouped by term with a counting sort and cut into blocks
 * (postings-block.ts). What a merge does message by message, without rewriting any block: the way to index
 * many messages at once. Flat arrays, not an array per term: at 200,000 messages the trigram index holds
 * millions of terms, and small arrays by the million cost more in allocation and garbage collection than the
 * indexing itself.
 */
import { BLOCK_BYTES, type PostingsBlock, encodeFlatBlock, postingBytes } from './postings-block.js';
import type { IndexedText } from './postings.js';

/** A Uint32Array that doubles as it fills. */
class GrowingUint32 {
  values = new Uint32Array(1024);
  length = 0;

  push(value: number): void {
    if (this.length === this.values.length) this.grow(this.length + 1);
    this.values[this.length++] = value;
  }

  /** Room for `needed` values in all. */
  grow(needed: number): void {
    if (needed <= this.values.length) return;
    let size = this.values.length * 2;
    while (size < needed) size *= 2;
    const grown = new Uint32Array(size);
    grown.set(this.values.subarray(0, this.length));
    this.values = grown;
  }
}

export class PostingsBuilder {
  /** Term → its number, in order of first appearance. */
  private readonly terms = new Map<string, number>();
  /** Per message, in the order added: its id and length in tokens. */
  private ids: number[] = [];
  private readonly lengths = new GrowingUint32();
  /** Per posting (a term in a message), in the order added: the term's number and the message's. */
  private readonly postingTerm = new GrowingUint32();
  private readonly postingMessage = new GrowingUint32();
  /** Every posting's positions, one after another in the order the postings were added. */
  private readonly positions = new GrowingUint32();
  /** Where each posting's positions start in `positions` (one more entry: the end). */
  private readonly positionStart = new GrowingUint32();
  private lastId = Number.NEGATIVE_INFINITY;
  private sealed = false;
  /** Tokens of every message added (bm25's corpus total). */
  tokens = 0;

  /** Messages added. */
  get messages(): number {
    return this.ids.length;
  }

  /** Add a message; ids must ascend. */
  add(id: number, indexed: IndexedText): void {
    if (this.sealed) throw new RangeError('postings build: add() after blocks()');
    if (id <= this.lastId) throw new RangeError(`postings build: id ${id} does not follow ${this.lastId}`);
    this.lastId = id;
    const message = this.ids.length;
    this.ids.push(id);
    this.lengths.push(indexed.length);
    this.tokens += indexed.length;
    for (const [term, at] of indexed.terms) {
      let number = this.terms.get(term);
      if (number === undefined) {
        number = this.terms.size;
        this.terms.set(term, number);
      }
      this.postingTerm.push(number);
      this.postingMessage.push(message);
      this.positionStart.push(this.positions.length);
      let k = this.positions.length;
      if (k + at.length > this.positions.values.length) this.positions.grow(k + at.length);
      const values = this.positions.values;
      for (let i = 0; i < at.length; i++) values[k++] = at[i]!;
      this.positions.length = k;
    }
  }

  /**
   * The blocks, in batches of about `batchBytes` of data, terms in order (a table keyed by term then first id
   * fills its pages in order). Cut as encodeBlocks cuts a term's list, so they equal a merge's blocks. Once.
   */
  *blocks(batchBytes = 4 * 2 ** 20): Generator<PostingsBlock[]> {
    if (this.sealed) throw new RangeError('postings build: blocks() twice');
    this.sealed = true;
    const postings = this.postingTerm.length;
    this.positionStart.push(this.positions.length);
    const termOf = this.postingTerm.values;
    const messageOf = this.postingMessage.values;
    const starts = this.positionStart.values;
    const allPositions = this.positions.values;
    const lengths = this.lengths.values;
    // Counting sort by term; stable, so each term's postings stay in id order.
    const first = new Uint32Array(this.terms.size + 1);
    for (let k = 0; k < postings; k++) first[termOf[k]! + 1]!++;
    for (let t = 0; t < this.terms.size; t++) first[t + 1]! += first[t]!;
    const order = new Uint32Array(postings);
    const cursor = first.slice(0, this.terms.size);
    for (let k = 0; k < postings; k++) order[cursor[termOf[k]!]!++] = k;

    // One block's arrays, reused.
    let capacity = 256;
    let ids = new Float64Array(capacity);
    let frequencies = new Uint32Array(capacity);
    let blockLengths = new Uint32Array(capacity);
    const blockPositions = new GrowingUint32();
    const encode = (term: string, from: number, to: number): PostingsBlock => {
      const count = to - from;
      if (count > capacity) {
        capacity = count * 2;
        ids = new Float64Array(capacity);
        frequencies = new Uint32Array(capacity);
        blockLengths = new Uint32Array(capacity);
      }
      let total = 0;
      for (let i = 0; i < count; i++) {
        const k = order[from + i]!;
        total += starts[k + 1]! - starts[k]!;
      }
      blockPositions.length = 0;
      blockPositions.grow(total);
      const out = blockPositions.values;
      let at = 0;
      for (let i = 0; i < count; i++) {
        const k = order[from + i]!;
        const message = messageOf[k]!;
        ids[i] = this.ids[message]!;
        blockLengths[i] = lengths[message]!;
        const start = starts[k]!;
        const end = starts[k + 1]!;
        frequencies[i] = end - start;
        for (let p = start; p < end; p++) out[at++] = allPositions[p]!;
      }
      return encodeFlatBlock(term, {
        count,
        ids,
        frequencies,
        lengths: blockLengths,
        positions: blockPositions.values,
      });
    };

    let batch: PostingsBlock[] = [];
    let bytes = 0;
    // The default sort (no comparator) orders strings as < does, natively.
    for (const term of [...this.terms.keys()].sort()) {
      const t = this.terms.get(term)!;
      const end = first[t + 1]!;
      let from = first[t]!;
      let size = 0;
      for (let j = from; j < end; j++) {
        const k = order[j]!;
        size += postingBytes(starts[k + 1]! - starts[k]!);
        if (size >= BLOCK_BYTES || j === end - 1) {
          const block = encode(term, from, j + 1);
          batch.push(block);
          bytes += block.data.length + block.term.length + 32;
          from = j + 1;
          size = 0;
        }
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
