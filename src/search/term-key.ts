/**
 * The key a term's blocks are stored under. FTS5 indexes a token of any length (a pasted base64 image is one
 * unicode61 token of hundreds of KB), but an index key is bounded (a Postgres btree entry holds about 2.7 KB,
 * an InnoDB key 3,072 bytes). A term of at most TERM_KEY_BYTES UTF-8 bytes is its own key; a longer one is
 * keyed by its first TERM_KEY_BYTES bytes and its SHA-256, and the whole term is stored beside the key. Keys
 * are bytes compared bytewise, so every term starting with a prefix has a key in the prefix's key range.
 */
import { createHash } from 'node:crypto';

/** Terms up to this many UTF-8 bytes are their own key. */
export const TERM_KEY_BYTES = 1024;

/** The key of `term`'s blocks. */
export function termKey(term: string): Buffer {
  const bytes = Buffer.from(term, 'utf8');
  if (bytes.length <= TERM_KEY_BYTES) return bytes;
  return Buffer.concat([bytes.subarray(0, TERM_KEY_BYTES), createHash('sha256').update(bytes).digest()]);
}

/** Whether `term` is longer than its key, so stored whole beside it. */
export const isLongTerm = (term: string): boolean => Buffer.byteLength(term, 'utf8') > TERM_KEY_BYTES;

/**
 * The keys [from, to) of every term starting with `prefix` (to: null, no upper end). The range can also hold
 * keys of terms that do not start with it (a long prefix is cut to TERM_KEY_BYTES): check each term found.
 */
export function prefixKeyRange(prefix: string): { from: Buffer; to: Buffer | null } {
  const from = Buffer.from(prefix, 'utf8').subarray(0, TERM_KEY_BYTES);
  for (let i = from.length - 1; i >= 0; i--)
    if (from[i]! < 0xff) {
      const to = Buffer.from(from.subarray(0, i + 1));
      to[i] = from[i]! + 1;
      return { from, to };
    }
  return { from, to: null };
}
