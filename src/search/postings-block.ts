/**
 * A term's postings as stored blocks, laid out so a search reads only what it needs. Each block holds a run of
 * a term's messages in id order: the ids, the term's frequency in each, each message's length in tokens (bm25
 * needs it), then the positions (only phrases need them). The column-wise layout lets a reader stop before
 * the positions, and decode straight into typed arrays.
 *
 * Beside the data, a block keeps its bound: the pairs (frequency, length) no other message of the block beats
 * on both (higher frequency, shorter message). bm25 grows with the frequency and falls with the length, so the
 * best score any message of the block can reach is the best over these pairs, whatever the corpus' totals are
 * at query time. A search ranks blocks by that bound and stops reading once no block left can reach its page.
 */
import { type Posting, VarintWriter, decodeVarints } from './postings.js';

/** One stored block of a term's postings, as an engine writes and reads it. */
export interface PostingsBlock {
  term: string;
  firstId: number;
  lastId: number;
  /** Messages in the block. */
  count: number;
  /** The block's (frequency, length) pairs, encoded by encodeBound. */
  bound: Uint8Array;
  data: Uint8Array;
}

/** A block's postings, decoded. Positions are present when asked for. */
export interface DecodedBlock {
  ids: Float64Array;
  frequencies: Uint32Array;
  lengths: Uint32Array;
  /** Positions of message i: positions[starts[i]] … positions[starts[i + 1] - 1], ascending. */
  starts: Uint32Array | null;
  positions: Uint32Array | null;
}

/** One (frequency, length) pair of a block's bound. */
export interface BoundPoint {
  frequency: number;
  length: number;
}

/** A block closes once its positions and ids reach about this many bytes. */
export const BLOCK_BYTES = 4096;
/** A bound keeps at most this many pairs; beyond, neighbours merge into a looser pair. */
const BOUND_POINTS = 8;

/** The pairs of `points` that no other pair beats on both counts, loosened to at most BOUND_POINTS pairs. */
export function boundOf(points: readonly BoundPoint[]): BoundPoint[] {
  const sorted = [...points].sort((a, b) => b.frequency - a.frequency || a.length - b.length);
  const front: BoundPoint[] = [];
  for (const p of sorted) if (front.length === 0 || p.length < front[front.length - 1]!.length) front.push(p);
  // front: frequency falling, length falling. Merging two neighbours into (higher frequency, shorter length)
  // gives a pair at least as good as both: the bound stays an upper bound.
  while (front.length > BOUND_POINTS) {
    let best = 0;
    for (let i = 1; i + 1 < front.length; i++)
      if (front[i]!.frequency - front[i + 1]!.frequency < front[best]!.frequency - front[best + 1]!.frequency) best = i;
    front.splice(best, 2, { frequency: front[best]!.frequency, length: front[best + 1]!.length });
  }
  return front;
}

export function encodeBound(points: readonly BoundPoint[]): Uint8Array {
  const w = new VarintWriter();
  for (const p of points) {
    w.write(p.frequency);
    w.write(p.length);
  }
  return w.result();
}

export function decodeBound(bytes: Uint8Array): BoundPoint[] {
  const values = decodeVarints(bytes);
  if (values.length % 2 !== 0) throw new RangeError('postings: truncated bound');
  const out: BoundPoint[] = [];
  for (let i = 0; i < values.length; i += 2) out.push({ frequency: values[i]!, length: values[i + 1]! });
  return out;
}

/** What a posting of `frequency` positions counts toward a block's size when postings are cut into blocks. */
export const postingBytes = (frequency: number): number => 3 + 2 * frequency;

/**
 * Cut a term's postings (ids ascending) into blocks of about `blockBytes`. `lengthOf` gives each message's
 * length in tokens.
 */
export function encodeBlocks(
  term: string,
  postings: readonly Posting[],
  lengthOf: (id: number) => number,
  blockBytes = BLOCK_BYTES,
): PostingsBlock[] {
  const blocks: PostingsBlock[] = [];
  let start = 0;
  let bytes = 0;
  for (let i = 0; i < postings.length; i++) {
    bytes += postingBytes(postings[i]!.positions.length);
    if (bytes >= blockBytes || i === postings.length - 1) {
      blocks.push(encodeBlock(term, postings.slice(start, i + 1), lengthOf));
      start = i + 1;
      bytes = 0;
    }
  }
  return blocks;
}

/** One block of postings (ids ascending, at least one). */
export function encodeBlock(
  term: string,
  postings: readonly Posting[],
  lengthOf: (id: number) => number,
): PostingsBlock {
  const n = postings.length;
  const ids = new Float64Array(n);
  const frequencies = new Uint32Array(n);
  const lengths = new Uint32Array(n);
  let total = 0;
  for (let i = 0; i < n; i++) total += postings[i]!.positions.length;
  const positions = new Float64Array(total);
  let k = 0;
  for (let i = 0; i < n; i++) {
    const p = postings[i]!;
    ids[i] = p.id;
    frequencies[i] = p.positions.length;
    lengths[i] = lengthOf(p.id);
    for (const position of p.positions) positions[k++] = position;
  }
  return encodeFlatBlock(term, { count: n, ids, frequencies, lengths, positions });
}

/**
 * A run of postings in flat arrays: message i of `count` has id ids[i], the term frequencies[i] times, and
 * length lengths[i]; its positions follow message i - 1's in `positions`.
 */
export interface FlatPostings {
  count: number;
  ids: ArrayLike<number>;
  frequencies: ArrayLike<number>;
  lengths: ArrayLike<number>;
  positions: ArrayLike<number>;
}

/** One block from flat arrays (ids ascending, at least one message): no object per posting. */
export function encodeFlatBlock(term: string, flat: FlatPostings): PostingsBlock {
  const { count: n, ids, frequencies, lengths, positions } = flat;
  if (n === 0) throw new RangeError('postings: an empty block');
  let positionsCount = 0;
  for (let i = 0; i < n; i++) positionsCount += frequencies[i]!;
  const w = new VarintWriter(8 + 4 * n + 2 * positionsCount);
  w.write(n);
  const firstId = ids[0]!;
  let last = firstId;
  for (let i = 1; i < n; i++) {
    const id = ids[i]!;
    if (id <= last) throw new RangeError(`postings: id ${id} does not follow ${last}`);
    w.write(id - last);
    last = id;
  }
  for (let i = 0; i < n; i++) {
    if (frequencies[i] === 0) throw new RangeError(`postings: message ${ids[i]} has no position`);
    w.write(frequencies[i]!);
  }
  // The shortest message at each frequency: the bound's candidates, without an object per posting.
  const shortest = new Map<number, number>();
  for (let i = 0; i < n; i++) {
    const length = lengths[i]!;
    w.write(length);
    const f = frequencies[i]!;
    const known = shortest.get(f);
    if (known === undefined || length < known) shortest.set(f, length);
  }
  let k = 0;
  for (let i = 0; i < n; i++) {
    let at = 0;
    for (let j = 0; j < frequencies[i]!; j++) {
      const position = positions[k++]!;
      if (j > 0 && position <= at) throw new RangeError(`postings: position ${position} does not follow ${at}`);
      w.write(position - at);
      at = position;
    }
  }
  const points: BoundPoint[] = [];
  for (const [frequency, length] of shortest) points.push({ frequency, length });
  return {
    term,
    firstId,
    lastId: last,
    count: n,
    bound: encodeBound(boundOf(points)),
    data: w.result(),
  };
}

/** Decode a block's data; positions only when `withPositions`. */
export function decodeBlock(data: Uint8Array, firstId: number, withPositions: boolean): DecodedBlock {
  // The varint reads are written out inline: this is the loop every search runs over every block it reads.
  let p = 0;
  const end = data.length;
  const next = (): number => {
    if (p >= end) throw new RangeError('postings: truncated block');
    let b = data[p++]!;
    if (b < 0x80) return b;
    let value = b & 0x7f;
    let scale = 0x80;
    for (;;) {
      if (p >= end) throw new RangeError('postings: truncated block');
      b = data[p++]!;
      value += (b & 0x7f) * scale;
      if (b < 0x80) return value;
      scale *= 0x80;
    }
  };
  const n = next();
  const ids = new Float64Array(n);
  const frequencies = new Uint32Array(n);
  const lengths = new Uint32Array(n);
  let id = firstId;
  ids[0] = id;
  for (let i = 1; i < n; i++) {
    // A byte past the end reads as undefined, which fails the test and lets next() throw.
    const b = data[p]!;
    if (b < 0x80) {
      p++;
      id += b;
    } else id += next();
    ids[i] = id;
  }
  let total = 0;
  for (let i = 0; i < n; i++) {
    let f = data[p]!;
    if (f < 0x80) p++;
    else f = next();
    frequencies[i] = f;
    total += f;
  }
  for (let i = 0; i < n; i++) lengths[i] = next();
  if (!withPositions) return { ids, frequencies, lengths, starts: null, positions: null };
  const starts = new Uint32Array(n + 1);
  const positions = new Uint32Array(total);
  let k = 0;
  for (let i = 0; i < n; i++) {
    starts[i] = k;
    let at = 0;
    for (let j = 0; j < frequencies[i]!; j++) positions[k++] = at += next();
  }
  starts[n] = k;
  if (p !== end) throw new RangeError('postings: trailing bytes in a block');
  return { ids, frequencies, lengths, starts, positions };
}
