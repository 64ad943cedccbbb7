/**
 * Python string semantics that JavaScript does not share: Unicode whitespace as `str.strip()` and `re`'s
 * `\s` see it, and lengths and slices in code points rather than UTF-16 units.
 */

/** Python's whitespace (str.isspace): JavaScript's \s minus U+FEFF, plus U+001C..U+001F and U+0085. */
export const PY_WS = '\\t\\n\\v\\f\\r\\x1c-\\x1f \\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000';

/** Whether a UTF-16 unit is one of PY_WS (all of them are in the BMP, so no surrogate is). */
export function isPyWhitespace(c: number): boolean {
  return c <= 0x20
    ? (c >= 0x09 && c <= 0x0d) || c >= 0x1c
    : c === 0x85 ||
        c === 0xa0 ||
        c === 0x1680 ||
        (c >= 0x2000 && c <= 0x200a) ||
        c === 0x2028 ||
        c === 0x2029 ||
        c === 0x202f ||
        c === 0x205f ||
        c === 0x3000;
}

/** `str.strip()`: a scan from each end (a `[…]+$` regex tries every position of a long text). */
export function pyStrip(value: string): string {
  let start = 0;
  let end = value.length;
  while (start < end && isPyWhitespace(value.charCodeAt(start))) start++;
  while (end > start && isPyWhitespace(value.charCodeAt(end - 1))) end--;
  return start === 0 && end === value.length ? value : value.slice(start, end);
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
  // Count code points up to the cut, then slice once (a 64K-character head is cut per huge search hit).
  let units = 0;
  for (let seen = 0; seen < n && units < value.length; seen++) {
    const code = value.charCodeAt(units);
    const pair = code >= 0xd800 && code <= 0xdbff && (value.charCodeAt(units + 1) & 0xfc00) === 0xdc00;
    units += pair ? 2 : 1;
  }
  return value.slice(0, units);
}
