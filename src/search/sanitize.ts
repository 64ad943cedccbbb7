/**
 * Hermes v11's `_sanitize_fts5_query`, step for step, with Python's Unicode-aware `\w`, `\b` and `\s`
 * (JavaScript's are ASCII-only, so they are spelled out here). See hermes-schema-search.md §3.3.
 */
import { PY_WS, pyStrip } from '../codecs/python-text.js';

const W = '[\\p{L}\\p{N}_]'; // Python \w: str.isalnum() or '_'
const NOT_W_BEFORE = '(?<![\\p{L}\\p{N}_])';
const NOT_W_AFTER = '(?![\\p{L}\\p{N}_])';
const S = `[${PY_WS}]`;

const QUOTED_PHRASE = /"[^"]*"/g;
const SPECIALS = /[+{}()"^]/g;
const STAR_RUNS = /\*+/g;
const LEADING_STAR = new RegExp(`(^|${S})\\*`, 'gu');
const LEADING_OPERATOR = new RegExp(`^(AND|OR|NOT)${NOT_W_AFTER}${S}*`, 'iu');
const TRAILING_OPERATOR = new RegExp(`${S}+(AND|OR|NOT)${S}*$`, 'iu');
const COMPOUND_TERM = new RegExp(`${NOT_W_BEFORE}(${W}+(?:[._-]${W}+)+)${NOT_W_AFTER}`, 'gu');

export function sanitizeFts5Query(query: string): string {
  const phrases: string[] = [];
  // 1. Protect balanced quoted phrases (an empty pair counts).
  let s = query.replace(QUOTED_PHRASE, (phrase) => `\u0000Q${phrases.push(phrase) - 1}\u0000`);
  // 2. FTS5 specials (and any unbalanced quote) become spaces.
  s = s.replace(SPECIALS, ' ');
  // 3. Collapse star runs; drop a star that starts a word.
  s = s.replace(STAR_RUNS, '*').replace(LEADING_STAR, '$1');
  // 4. One dangling boolean operator at each end, case-insensitively.
  s = pyStrip(pyStrip(s).replace(LEADING_OPERATOR, '')).replace(TRAILING_OPERATOR, '');
  // 5. Quote dotted, hyphenated and underscored compounds (one pass over all three).
  s = s.replace(COMPOUND_TERM, '"$1"');
  // 6. Put the protected phrases back.
  phrases.forEach((phrase, i) => {
    s = s.replace(`\u0000Q${i}\u0000`, () => phrase); // a function: "$&" in a phrase stays literal
  });
  return pyStrip(s);
}
