/**
 * SQLite FTS5's evaluation of a query against one row's tokens: where each phrase occurs, which phrases
 * FTS5 counts for the row (the instances xInst() reports, which snippet() and bm25 see), and whether the
 * row matches. Used by the snippet builder (fts5-snippet.ts) and by `verify`, which judges one message as
 * the block index would find it.
 */
import type { QueryMode, QueryNode } from './query.js';
import { type Token, phraseTokens, scanner } from './tokenize.js';

/** At most this many phrase instances (the first, by position) are scored and highlighted. */
export const MAX_SNIPPET_INSTANCES = 50_000;

// --- the query ---------------------------------------------------------------------------------------------

export interface CompiledPhrase {
  /** The phrase's number in the query (FTS5 numbers phrases in the order they appear). */
  index: number;
  tokens: string[];
  prefix: boolean;
}

/** The query with each phrase tokenized and numbered. */
type CompiledNode =
  | { kind: 'phrase'; phrase: CompiledPhrase }
  | { kind: 'and' | 'or'; children: CompiledNode[] }
  | { kind: 'not'; left: CompiledNode; right: CompiledNode };

export interface CompiledQuery {
  tree: CompiledNode;
  phrases: CompiledPhrase[];
  /** The most tokens in a phrase (at least 1). */
  maxLength: number;
}

export function compile(root: QueryNode, mode: QueryMode): CompiledQuery {
  const phrases: CompiledPhrase[] = [];
  const walk = (node: QueryNode): CompiledNode => {
    switch (node.kind) {
      case 'phrase': {
        const phrase = { index: phrases.length, tokens: phraseTokens(node.text, mode), prefix: node.prefix };
        phrases.push(phrase);
        return { kind: 'phrase', phrase };
      }
      case 'and':
      case 'or':
        return { kind: node.kind, children: node.children.map(walk) };
      case 'not': {
        const left = walk(node.left);
        return { kind: 'not', left, right: walk(node.right) };
      }
    }
  };
  const tree = walk(root);
  return { tree, phrases, maxLength: Math.max(1, ...phrases.map((p) => p.tokens.length)) };
}

/**
 * The phrases whose instances FTS5 reports for a row, given which phrases occur in it: FTS5 clears the
 * position lists of every sub-expression that does not match the row. A phrase counts when it occurs; AND
 * keeps its children's phrases only when all of them match; OR keeps those of its matching children; NOT
 * keeps its left side's only when the left matches and the right does not (the right side never counts).
 */
function contributing(q: CompiledQuery, occurs: (p: CompiledPhrase) => boolean): Set<number> {
  return evaluate(q, occurs).phrases;
}

/** Whether the query matches a row in which exactly the phrases `occurs` accepts occur, and which count. */
function evaluate(q: CompiledQuery, occurs: (p: CompiledPhrase) => boolean): { match: boolean; phrases: Set<number> } {
  const eval_ = (node: CompiledNode): { match: boolean; phrases: number[] } => {
    switch (node.kind) {
      case 'phrase': {
        const match = node.phrase.tokens.length > 0 && occurs(node.phrase);
        return { match, phrases: match ? [node.phrase.index] : [] };
      }
      case 'and': {
        const parts = node.children.map(eval_);
        const match = parts.every((r) => r.match);
        return { match, phrases: match ? parts.flatMap((r) => r.phrases) : [] };
      }
      case 'or': {
        const parts = node.children.map(eval_).filter((r) => r.match);
        return { match: parts.length > 0, phrases: parts.flatMap((r) => r.phrases) };
      }
      case 'not': {
        const left = eval_(node.left);
        const match = left.match && !eval_(node.right).match;
        return { match, phrases: match ? left.phrases : [] };
      }
    }
  };
  const result = eval_(q.tree);
  return { match: result.match, phrases: new Set(result.phrases) };
}

/**
 * Which phrases count for a long row, given the phrases a scan of it has `seen`: when the scan reached its
 * end (`complete`), those contributing() finds. When it stopped early, phrases it did not see are either
 * absent or occur past it (where they cannot add instances to the region, only decide which phrases
 * count). The row matched the query, so take the completion that makes it match: unseen phrases present
 * (an AND needs them), else absent (a NOT needs its right side absent).
 */
export function countedPhrases(q: CompiledQuery, seen: (p: CompiledPhrase) => boolean, complete: boolean): Set<number> {
  if (complete) return contributing(q, seen);
  const asPresent = evaluate(q, () => true);
  if (asPresent.match) return asPresent.phrases;
  const asAbsent = evaluate(q, seen);
  return asAbsent.match ? asAbsent.phrases : asPresent.phrases;
}

// --- instances ---------------------------------------------------------------------------------------------

/** Phrase instances in position order (ties: phrase order), as FTS5's xInst() lists them. */
export interface InstanceList {
  pos: Int32Array;
  phrase: Int32Array;
  count: number;
  /** xPhraseSize(): the number of tokens of each phrase of the query. */
  sizes: number[];
}

/** Start positions of a phrase among the tokens (consecutive tokens; a prefix phrase's last token a prefix). */
function phrasePositions(
  p: CompiledPhrase,
  texts: readonly string[],
  index: (() => Map<string, number[]>) | null,
): number[] {
  const n = p.tokens.length;
  if (n === 0) return [];
  const first = p.tokens[0]!;
  const last = p.tokens[n - 1]!;
  const out: number[] = [];
  if (n === 1 && p.prefix) {
    if (index) {
      // Each distinct token is tested once, not each occurrence.
      for (const [t, at] of index()) if (t.startsWith(last)) for (const k of at) out.push(k);
      return out.sort((a, b) => a - b);
    }
    for (let k = 0; k < texts.length; k++) if (texts[k]!.startsWith(last)) out.push(k);
    return out;
  }
  const matchesAt = (k: number) => {
    if (k + n > texts.length) return false;
    for (let j = 1; j < n - 1; j++) if (texts[k + j] !== p.tokens[j]) return false;
    return n === 1 || (p.prefix ? texts[k + n - 1]!.startsWith(last) : texts[k + n - 1] === last);
  };
  if (index) {
    for (const k of index().get(first) ?? []) if (matchesAt(k)) out.push(k);
  } else {
    for (let k = 0; k < texts.length; k++) if (texts[k] === first && matchesAt(k)) out.push(k);
  }
  return out;
}

/** Phrases up to this many each scan the row's tokens; more share one index of them (tokenIndex). */
const SCAN_PHRASES_MAX = 8;

/** A few phrases scan the tokens; many share one index of them, built on first use (null: scan). */
function tokenIndex(q: CompiledQuery, texts: readonly string[]): TokenIndex | null {
  if (q.phrases.length <= SCAN_PHRASES_MAX) return null;
  let map: Map<string, number[]> | null = null;
  const index = () => {
    if (map === null) {
      map = new Map();
      texts.forEach((t, k) => {
        const list = map!.get(t);
        if (list) list.push(k);
        else map!.set(t, [k]);
      });
    }
    return map;
  };
  return index;
}

/** Each token's positions, built on first call. */
type TokenIndex = () => Map<string, number[]>;

/**
 * The instances FTS5 reports for a row: the instances of the phrases that count, ordered by position then
 * phrase. `counted`: the phrases that count, when the tokens are only a region of the row (default: those
 * contributing() finds with these tokens as the whole row).
 */
export function instancesOf(q: CompiledQuery, texts: readonly string[], counted?: Set<number>): InstanceList {
  const index = tokenIndex(q, texts);
  // A phrase written several times in the query is looked for once.
  const positions = new Map<string, number[]>();
  const positionsOf = (p: CompiledPhrase) => {
    const key = JSON.stringify([p.prefix, p.tokens]);
    let list = positions.get(key);
    if (!list) {
      list = phrasePositions(p, texts, index);
      positions.set(key, list);
    }
    return list;
  };
  counted ??= contributing(q, (p) => positionsOf(p).length > 0);
  const nPhrase = q.phrases.length;
  let total = 0;
  for (const i of counted) total += positionsOf(q.phrases[i]!).length;
  const keys = new Float64Array(total);
  let k = 0;
  for (const i of counted) for (const at of positionsOf(q.phrases[i]!)) keys[k++] = at * nPhrase + i;
  keys.sort();
  const count = Math.min(total, MAX_SNIPPET_INSTANCES);
  const pos = new Int32Array(count);
  const phrase = new Int32Array(count);
  for (let j = 0; j < count; j++) {
    pos[j] = Math.floor(keys[j]! / nPhrase);
    phrase[j] = keys[j]! - pos[j]! * nPhrase;
  }
  return { pos, phrase, count, sizes: q.phrases.map((p) => p.tokens.length) };
}

export interface PhraseInstance {
  /** The phrase's number in the query (phrases numbered in the order they appear). */
  phrase: number;
  /** Token position of the instance's first token. */
  pos: number;
}

/**
 * The phrase instances FTS5 reports (xInst) when `root` is evaluated against a row with these tokens
 * (from unicode61Tokens for 'words', trigramTokens for 'substrings'): only phrases that count for the row
 * (see contributing()), ordered by position then phrase; `phraseSizes` is xPhraseSize for every phrase.
 */
export function matchingInstances(
  root: QueryNode,
  tokens: ReadonlyArray<Token | string>,
  mode: QueryMode = 'words',
): { instances: PhraseInstance[]; phraseSizes: number[] } {
  const list = instancesOf(
    compile(root, mode),
    tokens.map((t) => (typeof t === 'string' ? t : t.text)),
  );
  const instances: PhraseInstance[] = [];
  for (let j = 0; j < list.count; j++) instances.push({ phrase: list.phrase[j]!, pos: list.pos[j]! });
  return { instances, phraseSizes: list.sizes };
}

/** What FTS5 knows of one row for a query: whether it matches, bm25's phrase frequencies, and its length. */
export interface RowEvaluation {
  match: boolean;
  /** Per phrase (allPhrases numbering): its instances in the row when FTS5 counts it there (see contributing()), else 0. */
  freq: number[];
  /** The row's length in tokens (bm25's document length). */
  length: number;
}

/**
 * FTS5's answer for one row, computed from its whole indexed text (verify's check of a message, on the
 * engines that keep the block index), so that what it says is FTS5's.
 */
export function evaluateRow(root: QueryNode, text: string, mode: QueryMode): RowEvaluation {
  return rowEvaluator(root, mode)(text);
}

/** Tokens scanned or indexed between two pauses of a stepwise evaluation (rowEvaluatorSteps). */
const STEP_TOKENS = 8_192;

/** evaluateRow for many rows of one query: the query is compiled, and its ASCII patterns built, once. */
export function rowEvaluator(root: QueryNode, mode: QueryMode): (text: string) => RowEvaluation {
  const steps = rowEvaluatorSteps(root, mode);
  return (text) => {
    const it = steps(text);
    for (;;) {
      const step = it.next();
      if (step.done) return step.value;
    }
  };
}

/**
 * rowEvaluator in steps: each row's evaluation pauses (yields) between pieces of work of a few thousand
 * tokens or one phrase, so that a caller judging megabyte rows against a long query on the event loop can
 * let it run between them (MySQL's search). The answer is rowEvaluator's.
 */
export function rowEvaluatorSteps(
  root: QueryNode,
  mode: QueryMode,
): (text: string) => Generator<void, RowEvaluation, void> {
  const q = compile(root, mode);
  const patterns = new Map<number, RegExp | null>();
  return function* (text) {
    if (mode === 'words' && !NON_ASCII.test(text)) return yield* asciiRowSteps(q, text, patterns);
    return yield* internedSteps(q, text, mode);
  };
}

/**
 * The general path over the row's tokens as numbers (each distinct token once as a string): a megabyte row
 * has a million trigrams, and a million live strings make every young-generation collection copy them all.
 */
function* internedSteps(q: CompiledQuery, text: string, mode: QueryMode): Generator<void, RowEvaluation, void> {
  const ids = new Map<string, number>();
  const distinct: string[] = [];
  let codes = new Int32Array(1024);
  let n = 0;
  const sc = scanner(text, mode);
  while (sc.next()) {
    let id = ids.get(sc.text);
    if (id === undefined) {
      id = distinct.length;
      ids.set(sc.text, id);
      distinct.push(sc.text);
    }
    if (n === codes.length) {
      const grown = new Int32Array(n * 2);
      grown.set(codes);
      codes = grown;
    }
    codes[n++] = id;
    if (n % STEP_TOKENS === 0) yield;
  }
  // Many phrases: each token's positions, as one array sorted by token (a counting sort), instead of a scan each.
  let starts: Int32Array | null = null;
  let positions: Int32Array | null = null;
  if (q.phrases.length > SCAN_PHRASES_MAX) {
    starts = new Int32Array(distinct.length + 1);
    for (let k = 0; k < n; k++) {
      starts[codes[k]! + 1]!++;
      if ((k + 1) % STEP_TOKENS === 0) yield;
    }
    for (let id = 0; id < distinct.length; id++) starts[id + 1]! += starts[id]!;
    const next = starts.slice(0, distinct.length);
    positions = new Int32Array(n);
    for (let k = 0; k < n; k++) {
      positions[next[codes[k]!]!++] = k;
      if ((k + 1) % STEP_TOKENS === 0) yield;
    }
  }
  const counts: number[] = [];
  for (const p of q.phrases) {
    counts.push(internedCount(p, codes, n, ids, distinct, starts, positions));
    yield;
  }
  return evaluation(q, counts, n);
}

/** How many times phrase `p` occurs among the row's `n` token numbers (phrasePositions' count). */
function internedCount(
  p: CompiledPhrase,
  codes: Int32Array,
  n: number,
  ids: Map<string, number>,
  distinct: readonly string[],
  starts: Int32Array | null,
  positions: Int32Array | null,
): number {
  const size = p.tokens.length;
  if (size === 0) return 0;
  const last = p.tokens[size - 1]!;
  // Each token as its number (-1: not in the row); a prefix phrase's last token as the set of numbers it begins.
  const exact = p.tokens.map((t) => ids.get(t) ?? -1);
  let lastIds: Set<number> | null = null;
  if (p.prefix) {
    lastIds = new Set();
    for (let id = 0; id < distinct.length; id++) if (distinct[id]!.startsWith(last)) lastIds.add(id);
  }
  const lastMatches = (id: number) => (lastIds ? lastIds.has(id) : id === exact[size - 1]);
  if (size === 1) {
    if (lastIds === null) {
      const id = exact[0]!;
      if (id < 0) return 0;
      if (starts) return starts[id + 1]! - starts[id]!;
      let c = 0;
      for (let k = 0; k < n; k++) if (codes[k] === id) c++;
      return c;
    }
    if (starts) {
      let c = 0;
      for (const id of lastIds) c += starts[id + 1]! - starts[id]!;
      return c;
    }
    let c = 0;
    for (let k = 0; k < n; k++) if (lastIds.has(codes[k]!)) c++;
    return c;
  }
  for (let j = 0; j < size - 1; j++) if (exact[j]! < 0) return 0;
  const matchesAt = (k: number) => {
    if (k + size > n) return false;
    for (let j = 1; j < size - 1; j++) if (codes[k + j] !== exact[j]) return false;
    return lastMatches(codes[k + size - 1]!);
  };
  const first = exact[0]!;
  let c = 0;
  if (starts && positions) {
    for (let i = starts[first]!; i < starts[first + 1]!; i++) if (matchesAt(positions[i]!)) c++;
  } else {
    for (let k = 0; k < n; k++) if (codes[k] === first && matchesAt(k)) c++;
  }
  return c;
}

/** The answer from each phrase's count (computed for every phrase with tokens). */
function evaluation(q: CompiledQuery, counts: readonly number[], length: number): RowEvaluation {
  const { match, phrases } = evaluate(q, (p) => counts[p.index]! > 0);
  const freq = q.phrases.map((p) => (match && phrases.has(p.index) ? counts[p.index]! : 0));
  return { match, freq, length };
}

/** evaluateRow from the row's tokens (as unicode61Tokens or trigramTokens give them), by the general path. */
export function evaluateTokenizedRow(root: QueryNode, tokens: readonly string[], mode: QueryMode): RowEvaluation {
  return evaluateTokens(compile(root, mode), tokens);
}

function evaluateTokens(q: CompiledQuery, texts: readonly string[]): RowEvaluation {
  const index = tokenIndex(q, texts);
  return evaluation(
    q,
    q.phrases.map((p) => phrasePositions(p, texts, index).length),
    texts.length,
  );
}

const NON_ASCII = /[^\x00-\x7f]/;
const ASCII_WORD = '[0-9A-Za-z]';
const ASCII_GAP = '[^0-9A-Za-z]+';
const isAsciiWordChar = (c: number) => (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122);

/**
 * evaluateRow over ASCII-only text, without building a string per token: unicode61 then cuts at every
 * character outside [0-9A-Za-z] and only lower-cases, so each phrase's instances are the matches of one
 * case-insensitive regular expression (a lookahead, so overlapping instances of a phrase all count).
 */
function asciiPattern(p: CompiledPhrase): RegExp | null {
  // A folded token with anything but [0-9a-z] in it matches no token of an ASCII text.
  if (!p.tokens.every((t) => /^[0-9a-z]+$/.test(t))) return null;
  const last = p.tokens.length - 1;
  const body = p.tokens
    .map((t, i) => (i === last ? (p.prefix ? `${t}${ASCII_WORD}*` : `${t}(?!${ASCII_WORD})`) : t))
    .join(ASCII_GAP);
  return new RegExp(p.tokens.length === 1 ? `(?<!${ASCII_WORD})${body}` : `(?<!${ASCII_WORD})(?=${body})`, 'gi');
}

function* asciiRowSteps(
  q: CompiledQuery,
  text: string,
  patterns: Map<number, RegExp | null>,
): Generator<void, RowEvaluation, void> {
  const counts: number[] = [];
  for (const p of q.phrases) {
    let re = patterns.get(p.index);
    if (re === undefined) {
      re = p.tokens.length === 0 ? null : asciiPattern(p);
      patterns.set(p.index, re);
    }
    let n = 0;
    // matchAll works on a copy of the pattern: its lastIndex never carries over between rows.
    if (re !== null) for (const _ of text.matchAll(re)) n++;
    counts.push(n);
    yield;
  }
  return evaluation(q, counts, asciiTokenCount(text));
}

function asciiTokenCount(text: string): number {
  let n = 0;
  let inWord = false;
  for (let i = 0; i < text.length; i++) {
    const word = isAsciiWordChar(text.charCodeAt(i));
    if (word && !inWord) n++;
    inWord = word;
  }
  return n;
}

/** The number of tokens `mode`'s tokenizer makes of `text` (bm25's document length for 'words'). */
export function tokenCount(text: string, mode: QueryMode = 'words'): number {
  if (mode === 'words' && !NON_ASCII.test(text)) return asciiTokenCount(text);
  const sc = scanner(text, mode);
  let n = 0;
  while (sc.next()) n++;
  return n;
}
