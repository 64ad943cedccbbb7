/**
 * An index built in one pass from messages in id order (an import, or a store's first index): what a merge does
 * message by message, without rewriting any block — the way to index many messages at once. Every posting is
 * appended to flat typed arrays and chained to its term's previous one; blocks are then cut term by term
 * (postings-block.ts) by walking each term's chain, so no step runs over every posting before the first batch
 * (the event loop runs between batches). Flat arrays, not an array per term: at 200,000 messages the trigram
 * index holds millions of postings, and small arrays by the million cost more in allocation and garbage
 * collection than the indexing itself.
 */
import { BLOCK_BYTES, type PostingsBlock, encodeFlatBlock, postingBytes } from './postings-block.js';
import type { IndexedText } from './postings.js';

/** The end of a term's chain of chunks. */
const NONE = 0xffffffff;
/** Postings per chunk: a term's postings are read a chunk at a time, not by chasing one link per posting. */
const CHUNK = 32;

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
  /** Per posting (a term in a message), in the order added: the message's number. */
  private readonly postingMessage = new GrowingUint32();
  /**
   * Each term's postings in id order, as a chain of chunks: a chunk is the offset of the next (or NONE) then
   * CHUNK posting numbers.
   */
  private readonly chunks = new GrowingUint32();
  /** Per term: its first and last chunk, and how many postings the last holds. */
  private readonly termHead = new GrowingUint32();
  private readonly termTail = new GrowingUint32();
  private readonly termFill = new GrowingUint32();
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
      const posting = this.postingMessage.length;
      this.postingMessage.push(message);
      let number = this.terms.get(term);
      if (number === undefined) {
        number = this.terms.size;
        this.terms.set(term, number);
        const chunk = this.newChunk();
        this.termHead.push(chunk);
        this.termTail.push(chunk);
        this.termFill.push(0);
      } else if (this.termFill.values[number] === CHUNK) {
        const chunk = this.newChunk();
        this.chunks.values[this.termTail.values[number]!] = chunk;
        this.termTail.values[number] = chunk;
        this.termFill.values[number] = 0;
      }
      this.chunks.values[this.termTail.values[number]! + 1 + this.termFill.values[number]!++] = posting;
      this.positionStart.push(this.positions.length);
      let k = this.positions.length;
      if (k + at.length > this.positions.values.length) this.positions.grow(k + at.length);
      const values = this.positions.values;
      for (let i = 0; i < at.length; i++) values[k++] = at[i]!;
      this.positions.length = k;
    }
  }

  private newChunk(): number {
    const chunk = this.chunks.length;
    this.chunks.grow(chunk + 1 + CHUNK);
    this.chunks.values[chunk] = NONE;
    this.chunks.length += 1 + CHUNK;
    return chunk;
  }

  /**
   * The blocks, in batches of about `batchBytes` of data, terms in order (a table keyed by term then first id
   * fills its pages in order). Cut as encodeBlocks cuts a term's list, so they equal a merge's blocks. Once.
   */
  *blocks(batchBytes = 4 * 2 ** 20): Generator<PostingsBlock[]> {
    if (this.sealed) throw new RangeError('postings build: blocks() twice');
    this.sealed = true;
    this.positionStart.push(this.positions.length);
    const cutter = new TermCutter(this);
    let batch: PostingsBlock[] = [];
    let bytes = 0;
    // The default sort (no comparator) orders strings as < does, natively.
    for (const term of [...this.terms.keys()].sort()) {
      bytes += cutter.cut(term, this.terms.get(term)!, batch);
      if (bytes >= batchBytes) {
        yield batch;
        batch = [];
        bytes = 0;
      }
    }
    if (batch.length > 0) yield batch;
  }

  /** The arrays a TermCutter reads (after blocks() sealed them). */
  get sealedArrays() {
    return {
      ids: this.ids,
      lengths: this.lengths.values,
      messageOf: this.postingMessage.values,
      starts: this.positionStart.values,
      positions: this.positions.values,
      chunks: this.chunks.values,
      termHead: this.termHead.values,
      termTail: this.termTail.values,
      termFill: this.termFill.values,
    };
  }
}

/** Cuts one term's postings into blocks, with arrays reused from term to term. */
class TermCutter {
  private readonly arrays: PostingsBuilder['sealedArrays'];
  /** The term's posting numbers, in id order. */
  private order = new Uint32Array(256);
  private ids = new Float64Array(256);
  private frequencies = new Uint32Array(256);
  private lengths = new Uint32Array(256);
  private readonly positions = new GrowingUint32();

  constructor(builder: PostingsBuilder) {
    this.arrays = builder.sealedArrays;
  }

  /** Append the term's blocks to `out`; returns their bytes (data, term and a row's overhead). */
  cut(term: string, t: number, out: PostingsBlock[]): number {
    const count = this.gather(t);
    const { starts } = this.arrays;
    const order = this.order;
    let bytes = 0;
    let from = 0;
    let size = 0;
    for (let j = 0; j < count; j++) {
      const k = order[j]!;
      size += postingBytes(starts[k + 1]! - starts[k]!);
      if (size >= BLOCK_BYTES || j === count - 1) {
        const block = this.encode(term, from, j + 1);
        out.push(block);
        bytes += block.data.length + block.term.length + 32;
        from = j + 1;
        size = 0;
      }
    }
    return bytes;
  }

  /** Copy term `t`'s posting numbers from its chunks into `order`; returns how many. */
  private gather(t: number): number {
    const { chunks, termHead, termTail, termFill } = this.arrays;
    const tail = termTail[t]!;
    let count = 0;
    for (let chunk = termHead[t]!; chunk !== NONE; chunk = chunks[chunk]!) {
      const fill = chunk === tail ? termFill[t]! : CHUNK;
      if (count + fill > this.order.length) {
        const grown = new Uint32Array(this.order.length * 2);
        grown.set(this.order);
        this.order = grown;
      }
      this.order.set(chunks.subarray(chunk + 1, chunk + 1 + fill), count);
      count += fill;
    }
    return count;
  }

  private encode(term: string, from: number, to: number): PostingsBlock {
    const { ids: messageIds, lengths, messageOf, starts, positions } = this.arrays;
    const order = this.order;
    const count = to - from;
    if (count > this.ids.length) {
      this.ids = new Float64Array(count * 2);
      this.frequencies = new Uint32Array(count * 2);
      this.lengths = new Uint32Array(count * 2);
    }
    const { ids, frequencies, lengths: blockLengths } = this;
    let total = 0;
    for (let i = from; i < to; i++) {
      const k = order[i]!;
      total += starts[k + 1]! - starts[k]!;
    }
    this.positions.length = 0;
    this.positions.grow(total);
    const blockPositions = this.positions.values;
    let at = 0;
    for (let i = 0; i < count; i++) {
      const k = order[from + i]!;
      const message = messageOf[k]!;
      ids[i] = messageIds[message]!;
      blockLengths[i] = lengths[message]!;
      const start = starts[k]!;
      const end = starts[k + 1]!;
      frequencies[i] = end - start;
      for (let p = start; p < end; p++) blockPositions[at++] = positions[p]!;
    }
    return encodeFlatBlock(term, { count, ids, frequencies, lengths: blockLengths, positions: blockPositions });
  }
}
