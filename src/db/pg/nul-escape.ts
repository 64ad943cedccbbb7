/**
 * NUL in Postgres: `text` and `jsonb` cannot hold U+0000, yet a message may carry it (a `cat` of a binary
 * file, a terminal escape). Free-text columns and every string inside JSON columns are stored with an
 * escape that is invisible through the API:
 *
 *   U+0000 → U+FFFF U+FFFE        U+FFFF → U+FFFF U+FFFF        every other character as it is
 *
 * The code is prefix-free (U+FFFF always starts a pair), so decoding is exact. Both noncharacters are
 * separators for every tokenizer the search uses (FTS5 unicode61, the Postgres word regex, pg_trgm), as
 * NUL is, so the searchable words of a message do not change. Text without NUL or U+FFFF is stored as
 * it is, which is nearly all text: the encoders return their input untouched then.
 */
import type { JsonValue } from '../../codecs/json.js';

const NUL = '\u0000';
const ESC = '\uFFFF';
const ESC_NUL = '\uFFFF\uFFFE';
const ESC_ESC = '\uFFFF\uFFFF';

const needsEncoding = (s: string) => s.includes(NUL) || s.includes(ESC);

/** A string as a Postgres text column stores it. */
export function encodePgText(s: string): string {
  if (!needsEncoding(s)) return s;
  let out = '';
  for (const ch of s) out += ch === NUL ? ESC_NUL : ch === ESC ? ESC_ESC : ch;
  return out;
}

/**
 * A stored string back as it was written. A U+FFFF not followed by U+FFFE/U+FFFF (text written before
 * this encoding, or a head cut between the two halves of a pair) is kept as it is.
 */
export function decodePgText(s: string): string {
  if (!s.includes(ESC)) return s;
  return s.replace(/\uFFFF([\uFFFE\uFFFF])/g, (_, second: string) => (second === '\uFFFE' ? NUL : ESC));
}

/** JSON text as stored in a jsonb column back to JSON text with NUL spelled `\u0000`, as JSON encoders write it. */
export function decodePgJsonText(text: string): string {
  if (!text.includes(ESC)) return text;
  return text.replace(/\uFFFF([\uFFFE\uFFFF])/g, (_, second: string) => (second === '\uFFFE' ? '\\u0000' : ESC));
}

type StringMap = (s: string) => string;

/** Apply `fix` to every string and key of a JSON value, in place where it can; returns the value. */
function mapStrings(value: unknown, fix: StringMap, test: (s: string) => boolean): unknown {
  if (typeof value === 'string') return test(value) ? fix(value) : value;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) value[i] = mapStrings(value[i], fix, test);
    return value;
  }
  if (value !== null && typeof value === 'object') {
    const obj = value as Record<string, unknown>;
    const keys = Object.keys(obj);
    if (keys.some(test)) {
      // Rebuild to rename keys while keeping their order.
      const out: Record<string, unknown> = {};
      for (const k of keys) out[test(k) ? fix(k) : k] = mapStrings(obj[k], fix, test);
      return out;
    }
    for (const k of keys) obj[k] = mapStrings(obj[k], fix, test);
  }
  return value;
}

/**
 * JSON text as jsonb takes it: every string and key encoded. Only text that can hold NUL or U+FFFF is
 * parsed (a fresh value, so it is changed in place); the rest is returned as it is.
 */
export function encodePgJsonText(text: string): string {
  if (!text.includes('\\u0000') && !text.includes(ESC)) return text;
  return JSON.stringify(mapStrings(JSON.parse(text), encodePgText, needsEncoding));
}

/** A JSON value read from jsonb (freshly parsed by the driver: changed in place) as it was written. */
export function decodePgJson(value: JsonValue | null): JsonValue | null {
  return mapStrings(value, decodePgText, (s) => s.includes(ESC)) as JsonValue | null;
}
