/**
 * Postings as FTS5 keeps them: per term, the ids of the messages holding it in ascending order, each with the
 * term's positions in that message. One tokenizer decides the terms (src/search/tokenize.ts, FTS5's own
 * unicode61 and trigram rules), so a list built here holds what FTS5 holds for the same text.
 *
 * The encoding is FTS5's doclist shape: per message, the id as a delta from the previous one, the number of
 * positions, then the positions as deltas, all as unsigned LEB128 varints. A list is read front to back.
 */
import type { QueryMode } from './query.js';
import { scanner } from './tokenize.js';

/** The terms of one text with their positions (token offsets, from 0), and its length in tokens. */
export interface IndexedText {
  terms: Map<string, number[]>;
  length: number;
}

/** Tokenize `text` as the index of `mode` does: every term once, with the token offsets it occurs at. */
export function indexText(text: string, mode: QueryMode): IndexedText {
  const terms = new Map<string, number[]>();
  const sc = scanner(text, mode);
  let length = 0;
  while (sc.next()) {
    const term = sc.text;
    const at = terms.get(term);
    if (at === undefined) terms.set(term, [length]);
    else at.push(length);
    length++;
  }
  return { terms, length };
}

/** One message in a term's list. */
export interface Posting {
  id: number;
  /** Ascending token offsets. */
  positions: number[];
}

/** Grows a byte buffer of varints (unsigned LEB128). */
export class VarintWriter {
  private bytes: Uint8Array;
  length = 0;

  /** `capacity`: the bytes expected, so that a writer sized right never grows. */
  constructor(capacity = 64) {
    this.bytes = new Uint8Array(Math.max(16, capacity));
  }

  write(value: number): void {
    if (!Number.isSafeInteger(value) || value < 0) throw new RangeError(`postings: ${value} is not a varint`);
    if (this.length + 8 > this.bytes.length) {
      const grown = new Uint8Array(this.bytes.length * 2);
      grown.set(this.bytes.subarray(0, this.length));
      this.bytes = grown;
    }
    let v = value;
    while (v >= 0x80) {
      this.bytes[this.length++] = (v % 0x80) | 0x80;
      v = Math.floor(v / 0x80);
    }
    this.bytes[this.length++] = v;
  }

  result(): Uint8Array {
    return this.bytes.slice(0, this.length);
  }

  reset(): void {
    this.length = 0;
  }
}

/** Encode a term's list; `previousId` is the id the first delta counts from (the last id of an earlier block). */
export function encodePostings(postings: readonly Posting[], previousId = 0): Uint8Array {
  const w = new VarintWriter();
  let last = previousId;
  for (const { id, positions } of postings) {
    if (id <= last) throw new RangeError(`postings: id ${id} does not follow ${last}`);
    w.write(id - last);
    last = id;
    w.write(positions.length);
    let at = 0;
    for (const [i, p] of positions.entries()) {
      if (i > 0 && p <= at) throw new RangeError(`postings: position ${p} does not follow ${at}`);
      w.write(i === 0 ? p : p - at);
      at = p;
    }
  }
  return w.result();
}

/** A reader of the varints in `bytes`, front to back. */
function varintReader(bytes: Uint8Array): {
  read: () => number;
  done: () => boolean;
  take: (n: number) => Uint8Array;
} {
  let i = 0;
  return {
    read: () => {
      let value = 0;
      let scale = 1;
      for (;;) {
        if (i >= bytes.length) throw new RangeError('postings: truncated');
        const b = bytes[i++]!;
        value += (b & 0x7f) * scale;
        if (b < 0x80) return value;
        scale *= 0x80;
      }
    },
    done: () => i >= bytes.length,
    take: (n: number) => {
      if (i + n > bytes.length) throw new RangeError('postings: truncated');
      i += n;
      return bytes.subarray(i - n, i);
    },
  };
}

/** Unsigned integers as varints (a block's message lengths, beside its postings). */
export function encodeVarints(values: readonly number[]): Uint8Array {
  const w = new VarintWriter();
  for (const v of values) w.write(v);
  return w.result();
}

export function decodeVarints(bytes: Uint8Array): number[] {
  const out: number[] = [];
  const r = varintReader(bytes);
  while (!r.done()) out.push(r.read());
  return out;
}

/** Decode what encodePostings wrote (with the same `previousId`). */
export function decodePostings(bytes: Uint8Array, previousId = 0): Posting[] {
  const out: Posting[] = [];
  const { read, done } = varintReader(bytes);
  let last = previousId;
  while (!done()) {
    last += read();
    const count = read();
    const positions: number[] = [];
    let at = 0;
    for (let k = 0; k < count; k++) {
      at = k === 0 ? read() : at + read();
      positions.push(at);
    }
    out.push({ id: last, positions });
  }
  return out;
}

/**
 * One message's indexed text as bytes (a recent-segment row, postings-index.ts): its length in tokens, then
 * each term (UTF-8, its byte length first) with its positions as deltas, all varints.
 */
export function encodeIndexed(indexed: IndexedText): Uint8Array {
  const w = new VarintWriter();
  const utf8 = new TextEncoder();
  w.write(indexed.length);
  w.write(indexed.terms.size);
  const parts: Uint8Array[] = [];
  for (const [term, positions] of indexed.terms) {
    const bytes = utf8.encode(term);
    w.write(bytes.length);
    parts.push(w.result(), bytes);
    w.reset();
    w.write(positions.length);
    let at = 0;
    for (const [k, p] of positions.entries()) {
      if (k > 0 && p <= at) throw new RangeError(`postings: position ${p} does not follow ${at}`);
      w.write(p - at);
      at = p;
    }
  }
  parts.push(w.result());
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let n = 0;
  for (const p of parts) {
    out.set(p, n);
    n += p.length;
  }
  return out;
}

/** Decode what encodeIndexed wrote; damaged bytes are refused. */
export function decodeIndexed(bytes: Uint8Array): IndexedText {
  const { read, done, take } = varintReader(bytes);
  const utf8 = new TextDecoder('utf-8', { fatal: true });
  const length = read();
  const count = read();
  const terms = new Map<string, number[]>();
  for (let t = 0; t < count; t++) {
    const term = utf8.decode(take(read()));
    const n = read();
    const positions: number[] = [];
    let at = 0;
    for (let k = 0; k < n; k++) {
      at += read();
      positions.push(at);
    }
    terms.set(term, positions);
  }
  if (!done()) throw new RangeError('postings: trailing bytes');
  return { terms, length };
}
