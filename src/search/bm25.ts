/**
 * FTS5's bm25() (sqlite ext/fts5/fts5_aux.c), for backends that have no FTS5: the same phrases, the same
 * phrase frequencies (instances FTS5 would report for the row) and the same arithmetic, so Postgres ranks
 * as SQLite does. k1 = 1.2, b = 0.75; more negative is better; ties are broken by id ascending, as FTS5's
 * sorter leaves them.
 */
import type { Phrase, QueryNode } from './query.js';

/** FTS5's bm25() parameters. */
export const K1 = 1.2;
export const B = 0.75;

/** Every phrase of the query in order (FTS5's xPhraseCount / xPhraseSize numbering), duplicates included. */
export function allPhrases(node: QueryNode): Phrase[] {
  switch (node.kind) {
    case 'phrase':
      return [node];
    case 'and':
    case 'or':
      return node.children.flatMap(allPhrases);
    case 'not':
      return [...allPhrases(node.left), ...allPhrases(node.right)];
  }
}

/** Token positions of a row: lexeme → ascending positions. */
export type Positions = Map<string, number[]>;

/** Where a phrase occurs in a row: its first token's positions at which every later token follows. */
export function phraseInstances(phrase: Phrase, positions: Positions): number {
  const tokens = phrase.tokens;
  if (tokens.length === 0) return 0;
  const at = (i: number): Set<number> | number[] => {
    const token = tokens[i]!;
    if (!(phrase.prefix && i === tokens.length - 1)) return positions.get(token) ?? [];
    const all = new Set<number>();
    for (const [lexeme, list] of positions) if (lexeme.startsWith(token)) for (const p of list) all.add(p);
    return all;
  };
  const first = [...at(0)];
  if (tokens.length === 1) return first.length;
  const rest = tokens.slice(1).map((_, k) => new Set(at(k + 1)));
  let n = 0;
  for (const p of first) if (rest.every((set, k) => set.has(p + k + 1))) n++;
  return n;
}

/**
 * The phrase frequencies FTS5 reports for a matching row: a phrase counts only where the sub-expression
 * holding it matches the row (FTS5 clears the position lists of an OR branch that does not match and of
 * the right side of a NOT). `instances(p)` is how often phrase p occurs in the row.
 */
export function countedFrequencies(root: QueryNode, instances: (phrase: Phrase) => number): number[] {
  const phrases = allPhrases(root);
  // Most queries are a phrase, or an AND or OR of phrases: every occurrence of every phrase counts.
  if (root.kind === 'phrase' || ((root.kind === 'and' || root.kind === 'or') && root.children.every((c) => c.kind === 'phrase'))) {
    return phrases.map(instances);
  }
  const raw = new Map<Phrase, number>(phrases.map((p) => [p, instances(p)]));
  const matches = (node: QueryNode): boolean => {
    switch (node.kind) {
      case 'phrase':
        return raw.get(node)! > 0;
      case 'and':
        return node.children.every(matches);
      case 'or':
        return node.children.some(matches);
      case 'not':
        return matches(node.left) && !matches(node.right);
    }
  };
  const counted = new Map<Phrase, number>();
  const walk = (node: QueryNode, counts: boolean) => {
    switch (node.kind) {
      case 'phrase':
        counted.set(node, counts ? raw.get(node)! : 0);
        return;
      case 'and':
        for (const c of node.children) walk(c, counts);
        return;
      case 'or':
        for (const c of node.children) walk(c, counts && matches(c));
        return;
      case 'not':
        walk(node.left, counts);
        walk(node.right, false);
    }
  };
  walk(root, matches(root));
  return phrases.map((p) => counted.get(p) ?? 0);
}

export interface CorpusStats {
  /** Rows in the index. */
  rows: number;
  /** Tokens in the whole index. */
  tokens: number;
  /** Per phrase (allPhrases order): rows containing it anywhere. */
  hits: number[];
}

/** The per-query part of bm25(): each phrase's IDF and the average document length. */
export function bm25Weights(stats: CorpusStats): { idf: number[]; avgdl: number } {
  const idf = stats.hits.map((nHit) => {
    const value = Math.log((stats.rows - nHit + 0.5) / (nHit + 0.5));
    return value <= 0 ? 1e-6 : value;
  });
  return { idf, avgdl: stats.tokens / stats.rows };
}

/** bm25() of one row, in FTS5's order of operations. */
export function bm25Score(freq: number[], docLength: number, weights: { idf: number[]; avgdl: number }): number {
  let score = 0;
  for (let i = 0; i < weights.idf.length; i++) {
    const f = freq[i] ?? 0;
    score += weights.idf[i]! * ((f * (K1 + 1.0)) / (f + K1 * (1 - B + (B * docLength) / weights.avgdl)));
  }
  return -1.0 * score;
}

/** Parse a tsvector's text form (`'word':1,5 'other':3`) into positions (weights dropped). */
export function parseTsvectorPositions(text: string): Positions {
  const out: Positions = new Map();
  for (const m of text.matchAll(/'((?:[^']|'')*)'(?::([0-9A-D,]+))?/g)) {
    const lexeme = m[1]!.replace(/''/g, "'").replace(/\\(.)/g, '$1');
    const positions = (m[2] ?? '').split(',').filter(Boolean).map((p) => Number.parseInt(p, 10));
    out.set(lexeme, positions);
  }
  return out;
}

/**
 * Postgres' ts_rank('{1,1,1,1}', vector, 'word') for a word occurring tf times, as its float4 arithmetic
 * computes it (calc_rank_or: the sum of 1/j² over the occurrences, divided by π²/6). It grows strictly
 * with tf, so it gives a word's frequency without reading its positions (a tsvector keeps at most 256).
 */
const RANK_BY_FREQUENCY: number[] = (() => {
  const out = [0];
  let sum = 0;
  for (let tf = 1; tf <= 256; tf++) {
    sum = Math.fround(sum + Math.fround(1 / (tf * tf)));
    out.push(Math.fround(Math.fround(Math.fround(1 + sum) - 1) / 1.64493406685));
  }
  return out;
})();

/** The frequency whose ts_rank is nearest `rank` (0 for no occurrence). */
export function frequencyFromRank(rank: number): number {
  if (!(rank > 0)) return 0;
  let lo = 1;
  let hi = 256;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (RANK_BY_FREQUENCY[mid]! < rank) lo = mid + 1;
    else hi = mid;
  }
  return lo > 1 && rank - RANK_BY_FREQUENCY[lo - 1]! < RANK_BY_FREQUENCY[lo]! - rank ? lo - 1 : lo;
}
