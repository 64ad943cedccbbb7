/**
 * FTS5's bm25() (sqlite ext/fts5/fts5_aux.c), for backends that have no FTS5: the same phrases and the same
 * arithmetic, so Postgres ranks as SQLite does (db/pg/postings.ts supplies FTS5's phrase frequencies, and runs
 * this arithmetic in SQL too). k1 = 1.2, b = 0.75; more negative is better; ties are broken by id ascending,
 * as FTS5's sorter leaves them.
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
  // Postgres reads the corpus totals beside the matches, on another connection: a commit landing between the
  // two can leave the totals behind the matches (0 rows while there are hits). Never divide by zero for it.
  const rows = Math.max(stats.rows, ...stats.hits, 1);
  const idf = stats.hits.map((nHit) => {
    const value = Math.log((rows - nHit + 0.5) / (nHit + 0.5));
    return value <= 0 ? 1e-6 : value;
  });
  return { idf, avgdl: stats.tokens > 0 ? stats.tokens / rows : 1 };
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
