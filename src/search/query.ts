/**
 * The search query language: FTS5's query grammar (as much of it as a sanitized query can contain), parsed
 * once into a small AST that both dialects emit from. Precedence, measured on SQLite's FTS5: juxtaposed
 * phrases (implicit AND) bind tightest, then NOT, then AND, then OR; NOT is binary ("a NOT b").
 *
 * A phrase with no tokens (`""`, or a trigram string under 3 characters) matches nothing, is dropped from
 * a run of juxtaposed phrases, and simplifies away through the operators exactly as FTS5 evaluates it.
 * Anything FTS5 would reject (a dangling operator, `-x`, `key:value`, stray punctuation) is `invalid`:
 * the search returns no rows, as Hermes does when FTS5 raises.
 */
import { phraseTokens } from './tokenize.js';

export type Phrase = {
  kind: 'phrase';
  /** The phrase as written (inside quotes, or the bareword). */
  text: string;
  /** Tokens the index would see (words: unicode61-like; substrings: the text itself if 3+ characters). */
  tokens: string[];
  prefix: boolean;
};
export type QueryNode =
  | Phrase
  | { kind: 'and'; children: QueryNode[] }
  | { kind: 'or'; children: QueryNode[] }
  | { kind: 'not'; left: QueryNode; right: QueryNode };

export type ParsedQuery = { ok: true; root: QueryNode } | { ok: false; reason: 'invalid' | 'empty' };

/** How phrases meet the index: unicode61 words, or trigram substrings. */
export type QueryMode = 'words' | 'substrings';

type Token =
  | { type: 'string'; text: string; prefix: boolean; bare: boolean; nowhere: boolean }
  | { type: 'AND' | 'OR' | 'NOT' };

const FTS5_SPACE = new Set([' ', '\t', '\n', '\r']);
const isBarewordChar = (ch: string) => /[A-Za-z0-9_\u001a]/.test(ch) || ch.codePointAt(0)! >= 0x80;
const COLUMN = 'content';

class QueryError extends Error {}

function lex(input: string): Token[] {
  const tokens: Token[] = [];
  const chars = [...input];
  let i = 0;
  // After "content:" a phrase must follow (not an operator, not another filter, not the end).
  let filterOpen = false;
  // "- content:" excludes the only column: the next phrase can match nowhere.
  let negatedFilter = false;
  const skipSpace = (from: number) => {
    while (from < chars.length && FTS5_SPACE.has(chars[from]!)) from++;
    return from;
  };
  while (i < chars.length) {
    const ch = chars[i]!;
    if (FTS5_SPACE.has(ch)) {
      i++;
      continue;
    }
    if (ch === '-') {
      let j = skipSpace(i + 1);
      let name = '';
      while (j < chars.length && isBarewordChar(chars[j]!)) name += chars[j++];
      j = skipSpace(j);
      if (chars[j] !== ':' || name.toLowerCase() !== COLUMN || filterOpen)
        throw new QueryError(`no such column: ${name}`);
      filterOpen = true;
      negatedFilter = true;
      i = j + 1;
      continue;
    }
    let text: string;
    let bare = false;
    if (ch === '"') {
      text = '';
      i++;
      for (;;) {
        if (i >= chars.length) throw new QueryError('unterminated string');
        if (chars[i] === '"') {
          if (chars[i + 1] === '"') {
            text += '"';
            i += 2;
            continue;
          }
          i++;
          break;
        }
        text += chars[i++];
      }
    } else if (isBarewordChar(ch)) {
      text = '';
      while (i < chars.length && isBarewordChar(chars[i]!)) text += chars[i++];
      bare = true;
      // Keywords are keywords even when a '*' follows ("NOT*" is a syntax error in FTS5).
      if (text === 'AND' || text === 'OR' || text === 'NOT') {
        if (filterOpen) throw new QueryError('a column filter needs a phrase');
        tokens.push({ type: text });
        continue;
      }
    } else {
      throw new QueryError(`syntax error near ${ch}`);
    }
    let prefix = false;
    if (chars[i] === '*') {
      prefix = true;
      i++;
    }
    // A column filter: only our single column exists, so "content:" is a no-op and any other name fails.
    const j = skipSpace(i);
    if (chars[j] === ':' && !prefix) {
      if (text.toLowerCase() !== COLUMN || filterOpen) throw new QueryError(`no such column: ${text}`);
      filterOpen = true;
      i = j + 1;
      continue;
    }
    tokens.push({ type: 'string', text, prefix, bare, nowhere: negatedFilter });
    filterOpen = false;
    negatedFilter = false;
  }
  if (filterOpen) throw new QueryError('a column filter needs a phrase');
  return tokens;
}

/** A phrase's words as FTS5's unicode61 cuts them (diacritics removed, as Hermes configures it). */
const fts5Words: WordTokenizer = (text) => phraseTokens(text, 'words');

const EMPTY: QueryNode = { kind: 'or', children: [] }; // matches nothing

const isEmpty = (n: QueryNode) => n.kind === 'or' && n.children.length === 0;

/** How a phrase's text becomes the words the index holds (parseQuery's `options.words`). */
export type WordTokenizer = (text: string) => string[];

function phrase(
  token: Extract<Token, { type: 'string' }>,
  mode: QueryMode,
  words: WordTokenizer,
): Phrase & { nowhere: boolean } {
  const tokens = mode === 'words' ? words(token.text) : [...token.text].length >= 3 ? [token.text] : [];
  return { kind: 'phrase', text: token.text, tokens, prefix: token.prefix, nowhere: token.nowhere };
}

function parseTokens(tokens: Token[], mode: QueryMode, words: WordTokenizer): QueryNode {
  let pos = 0;
  const peek = () => tokens[pos];

  // list := phrase+ ; empty phrases drop out of the run (all empty -> matches nothing)
  const list = (): QueryNode => {
    const items: Array<Phrase & { nowhere: boolean }> = [];
    while (peek()?.type === 'string')
      items.push(phrase(tokens[pos++] as Extract<Token, { type: 'string' }>, mode, words));
    if (items.length === 0) throw new QueryError('expected a term');
    const kept = items.filter((p) => p.tokens.length > 0);
    // A phrase filtered to no column matches nothing, and so does the run it is in.
    if (kept.length === 0 || kept.some((p) => p.nowhere)) return EMPTY;
    const phrases: Phrase[] = kept.map(({ nowhere: _, ...p }) => p);
    return phrases.length === 1 ? phrases[0]! : { kind: 'and', children: phrases };
  };
  const not = (): QueryNode => {
    let left = list();
    while (peek()?.type === 'NOT') {
      pos++;
      const right = list();
      if (isEmpty(left)) continue; // nothing minus anything is nothing
      if (!isEmpty(right)) left = { kind: 'not', left, right };
    }
    return left;
  };
  const and = (): QueryNode => {
    const parts = [not()];
    while (peek()?.type === 'AND') {
      pos++;
      parts.push(not());
    }
    if (parts.some(isEmpty)) return EMPTY;
    return parts.length === 1 ? parts[0]! : { kind: 'and', children: parts };
  };
  const or = (): QueryNode => {
    const parts = [and()];
    while (peek()?.type === 'OR') {
      pos++;
      parts.push(and());
    }
    const kept = parts.filter((p) => !isEmpty(p));
    if (kept.length === 0) return EMPTY;
    return kept.length === 1 ? kept[0]! : { kind: 'or', children: kept };
  };
  const root = or();
  if (pos !== tokens.length) throw new QueryError('unexpected operator');
  return root;
}

/**
 * Parse a sanitized query. `options.words` cuts a phrase into words (default: FTS5's own unicode61, as every
 * engine's index cuts its rows, so a phrase is empty exactly when FTS5 finds it empty).
 */
export function parseQuery(input: string, mode: QueryMode, options: { words?: WordTokenizer } = {}): ParsedQuery {
  try {
    const tokens = lex(input);
    if (tokens.length === 0) return { ok: false, reason: 'empty' };
    const root = parseTokens(tokens, mode, options.words ?? fts5Words);
    return isEmpty(root) ? { ok: false, reason: 'empty' } : { ok: true, root };
  } catch (error) {
    if (error instanceof QueryError) return { ok: false, reason: 'invalid' };
    throw error;
  }
}
