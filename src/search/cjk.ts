/** Hermes' CJK detection and routing (hermes-schema-search.md §3.5). */
import { PY_WS } from '../codecs/python-text.js';

const CJK_RANGES: Array<[number, number]> = [
  [0x4e00, 0x9fff], // CJK Unified Ideographs
  [0x3400, 0x4dbf], // Extension A
  [0x20000, 0x2a6df], // Extension B
  [0x3000, 0x303f], // CJK Symbols and Punctuation
  [0x3040, 0x309f], // Hiragana
  [0x30a0, 0x30ff], // Katakana
  [0xac00, 0xd7af], // Hangul Syllables
];

export function isCjkCodePoint(cp: number): boolean {
  return CJK_RANGES.some(([lo, hi]) => cp >= lo && cp <= hi);
}

export function countCjk(text: string): number {
  let n = 0;
  for (const ch of text) if (isCjkCodePoint(ch.codePointAt(0)!)) n++;
  return n;
}

export const containsCjk = (text: string) => countCjk(text) > 0;

const OPERATORS = new Set(['AND', 'OR', 'NOT']);
export const isOperatorToken = (token: string) => OPERATORS.has(token.toUpperCase());

/** Python's `str.split()`: runs of Unicode whitespace, no empty pieces. */
export function pySplit(text: string): string[] {
  return text.split(new RegExp(`[${PY_WS}]+`, 'u')).filter((t) => t !== '');
}

/** `q.strip('"').strip()`: every leading/trailing double quote, then whitespace. */
export function stripQuotes(q: string): string {
  return q.replace(/^"+|"+$/g, '').replace(new RegExp(`^[${PY_WS}]+|[${PY_WS}]+$`, 'gu'), '');
}

export type CjkRoute = { path: 'trigram'; query: string } | { path: 'like'; tokens: string[] };

/**
 * Route a sanitized query that contains CJK: the trigram index when it has at least 3 CJK characters and
 * no CJK token shorter than 3 (#20494); otherwise a substring (LIKE) scan over every token, OR-ed.
 */
export function routeCjk(sanitized: string): CjkRoute {
  const raw = stripQuotes(sanitized);
  const tokens = pySplit(raw);
  const cjkTokens = tokens.filter((t) => !isOperatorToken(t) && containsCjk(t));
  const anyShort = cjkTokens.some((t) => countCjk(t) < 3);
  if (countCjk(raw) >= 3 && !anyShort) {
    // Operators stay as written (a lowercase "or" then becomes a term, as in Hermes); the rest are quoted.
    const query = tokens.map((t) => (isOperatorToken(t) ? t : `"${t.replace(/"/g, '""')}"`)).join(' ');
    return { path: 'trigram', query };
  }
  const terms = tokens.filter((t) => !isOperatorToken(t));
  return { path: 'like', tokens: terms.length > 0 ? terms : [raw] };
}
