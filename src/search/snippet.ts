/**
 * Snippets for Postgres hits, in the shape FTS5's snippet(…, '>>>', '<<<', '...', 40) gives on SQLite:
 * a window of about 40 words around the first match, matches wrapped in >>> <<<, "..." where text was cut.
 */
import { type Phrase, type QueryNode, positivePhrases } from './query.js';

const WORD = /[\p{L}\p{N}\p{Co}]+/gu;
const WINDOW_WORDS = 40;
const LEAD_WORDS = 5;

export function wordSnippet(text: string, phrases: Phrase[]): string {
  const words = [...text.matchAll(WORD)].map((m) => ({ start: m.index, end: m.index + m[0].length, word: m[0].toLowerCase() }));
  const exact = new Set<string>();
  const prefixes: string[] = [];
  for (const p of phrases) {
    p.tokens.forEach((t, i) => (p.prefix && i === p.tokens.length - 1 ? prefixes.push(t) : exact.add(t)));
  }
  const hit = (w: string) => exact.has(w) || prefixes.some((p) => w.startsWith(p));
  const first = Math.max(0, words.findIndex((w) => hit(w.word)));
  const from = Math.max(0, first - LEAD_WORDS);
  const to = Math.min(words.length, from + WINDOW_WORDS);
  if (words.length === 0) return text.slice(0, 120);
  let out = from > 0 ? '...' : '';
  let cursor = from > 0 ? words[from]!.start : 0;
  for (let i = from; i < to; i++) {
    const w = words[i]!;
    out += text.slice(cursor, w.start);
    const original = text.slice(w.start, w.end);
    out += hit(w.word) ? `>>>${original}<<<` : original;
    cursor = w.end;
  }
  out += to < words.length ? '...' : text.slice(cursor);
  return out;
}

export function substringSnippet(text: string, phrases: Phrase[]): string {
  const needles = phrases.flatMap((p) => p.tokens).map((t) => t.toLowerCase());
  const lower = text.toLowerCase();
  const starts = needles.map((n) => lower.indexOf(n)).filter((i) => i >= 0);
  const first = starts.length > 0 ? Math.min(...starts) : 0;
  const from = Math.max(0, first - 40);
  const to = Math.min(text.length, first + 80);
  let out = '';
  let i = from;
  while (i < to) {
    const match = needles.find((n) => n && lower.startsWith(n, i));
    if (match) {
      out += `>>>${text.slice(i, i + match.length)}<<<`;
      i += match.length;
    } else out += text[i++];
  }
  return `${from > 0 ? '...' : ''}${out}${to < text.length ? '...' : ''}`;
}

/** Texts longer than this are cut to a window around their first match before a snippet is computed. */
export const SNIPPET_WINDOW_CHARS = 16_384;
const WINDOW_LEAD = 2_048;

/**
 * A snippet whose cost is bounded whatever the text's size: a long text is first cut to a window around the
 * first place one of the query's phrases may start (a lower-cased search, linear and fast). `truncated`
 * says the text is only the head of the row's text, so there is more after it.
 */
export function boundedSnippet(text: string, match: QueryNode, path: 'words' | 'substrings', truncated: boolean): string {
  const phrases = positivePhrases(match);
  let window = text;
  let start = 0;
  if (text.length > SNIPPET_WINDOW_CHARS) {
    const lower = text.toLowerCase();
    const found = phrases.map((p) => (p.tokens[0] ? lower.indexOf(p.tokens[0].toLowerCase()) : -1)).filter((i) => i >= 0);
    start = found.length > 0 ? Math.max(0, Math.min(...found) - WINDOW_LEAD) : 0;
    window = text.slice(start, start + SNIPPET_WINDOW_CHARS);
  }
  let out = path === 'words' ? wordSnippet(window, phrases) : substringSnippet(window, phrases);
  if (start > 0 && !out.startsWith('...')) out = `...${out}`;
  if ((truncated || start + window.length < text.length) && !out.endsWith('...')) out = `${out}...`;
  return out;
}
