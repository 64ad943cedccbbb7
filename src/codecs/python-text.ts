/**
 * Python string semantics that JavaScript does not share: Unicode whitespace as `str.strip()` and `re`'s
 * `\s` see it, and lengths and slices in code points rather than UTF-16 units.
 */

/** Python's whitespace (str.isspace): JavaScript's \s minus U+FEFF, plus U+001C..U+001F and U+0085. */
export const PY_WS = '\\t\\n\\v\\f\\r\\x1c-\\x1f \\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000';

const LEADING = new RegExp(`^[${PY_WS}]+`, 'u');
const TRAILING = new RegExp(`[${PY_WS}]+$`, 'u');

/** `str.strip()` */
export function pyStrip(value: string): string {
  return value.replace(LEADING, '').replace(TRAILING, '');
}

/** `len(s)` */
export function pyLen(value: string): number {
  let n = 0;
  for (const _ of value) n++;
  return n;
}

/** `s[:n]` */
export function pySlice(value: string, n: number): string {
  if (value.length <= n) return value; // n UTF-16 units hold at most n code points
  let out = '';
  let count = 0;
  for (const ch of value) {
    if (count++ >= n) break;
    out += ch;
  }
  return out;
}
