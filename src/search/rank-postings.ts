/**
 * Relevance search over stored postings blocks (postings-block.ts), the same on every engine: the engine only
 * fetches blocks; this file evaluates the query as FTS5 does (phrases by positions, AND, OR, NOT, prefixes;
 * the phrases FTS5 counts for a row, fts5-match.ts) and ranks with FTS5's bm25 (bm25.ts), ties by id.
 *
 * Two ways, chosen per query:
 * - **Block bounds** when every phrase is one whole word: bm25's IDFs come from the blocks' counts, so before
 *   reading any posting the search knows, for each stretch of ids, the best score a message there can reach
 *   (the blocks' bounds). It reads the most promising stretches first and stops once none left can reach the
 *   page. A common word reads a few blocks, not its whole list.
 * - **Every match** otherwise: a phrase's or a prefix's IDF counts the messages it occurs in, which only its
 *   whole lists tell (FTS5's bm25 reads them whole too), so every block is read (positions only where a
 *   phrase of several words needs them) and every match ranked.
 */
import { compile } from './fts5-match.js';
import { decodeBound } from './postings-block.js';
import { type QueryMode, parseQuery } from './query.js';
import { byBounds, newestFloor } from './rank-by-bounds.js';
import { everyMatch } from './rank-every-match.js';
import { type Block, Pacer, type RankInput } from './rank-shared.js';

/** A stored block without its data, as an engine lists it. */
export interface BlockEntry {
  term: string;
  firstId: number;
  lastId: number;
  count: number;
  bound: Uint8Array;
}

/** The corpus totals bm25 needs: messages in the index and their tokens in all. */
export interface Totals {
  messages: number;
  tokens: number;
}

/** What an engine provides: its blocks, their data, and the corpus totals bm25 needs. */
export interface PostingsReader {
  /** Every block of the `terms`, and of every term starting with one of the `prefixes`. Any order. */
  blocks(terms: readonly string[], prefixes: readonly string[]): Promise<BlockEntry[]>;
  /** The data of these blocks, in the same order. */
  read(blocks: readonly BlockEntry[]): Promise<Uint8Array[]>;
  /** Messages in the index and their tokens in all. */
  totals(): Promise<Totals>;
}

export interface RankOptions {
  /**
   * The caller's filters (sources, roles…): given candidate ids, the ones that may be on the page. Asked
   * about a few messages at a time, best first, only those that could still reach the page.
   */
  accept?: (ids: number[]) => Promise<ReadonlySet<number>>;
  /**
   * Rank only the newest `window` matches (the largest ids) when the query, filters included, matches more:
   * the store's `searchRankWindow`, as SQLite's FTS5 path applies it. bm25's totals stay the corpus'.
   */
  window?: number;
  /**
   * With `limit` Infinity and no `accept`: every match with its score in id order, not sorted by score (a
   * caller ordering by time sorts them itself), in `byId`; `ids` and `scores` are then empty.
   */
  unordered?: boolean;
}

export interface RankedPostings {
  /**
   * The best `limit` matches, best first (bm25 ascending: more negative is better; ties by id). `limit` may
   * be Infinity: every match, ranked (what an order by time starts from).
   */
  ids: number[];
  scores: number[];
  /** Blocks read, of those the query's terms have (what the bounds saved). */
  blocksRead: number;
  blocksListed: number;
  /** True when more messages matched than `window` and only the newest `window` were ranked. */
  capped: boolean;
  /** With `unordered` (when every match was scored): every match in id order, with its bm25. */
  byId?: { ids: Float64Array; scores: Float64Array };
}

/**
 * The best `limit` messages for a query (FTS5 syntax, as the sanitizer and the CJK routing leave it), as
 * FTS5's `ORDER BY bm25(), rowid` gives them: over the word index (`words`: unicode61 terms) or the substring
 * index (`substrings`: trigram terms; a phrase is its consecutive trigrams). A query FTS5 would reject or
 * find empty matches nothing.
 */
export async function rankPostings(
  match: string,
  reader: PostingsReader,
  limit: number,
  mode: QueryMode = 'words',
  options: RankOptions = {},
): Promise<RankedPostings> {
  // Phrases are cut into words by FTS5's own rules, so a phrase is empty exactly where FTS5 finds it empty.
  const parsed = parseQuery(match, mode);
  if (!parsed.ok) return { ids: [], scores: [], blocksRead: 0, blocksListed: 0, capped: false };
  const q = compile(parsed.root, mode);
  const exact = new Set<string>();
  const prefixes = new Set<string>();
  for (const p of q.phrases)
    for (const [k, token] of p.tokens.entries()) (p.prefix && k === p.tokens.length - 1 ? prefixes : exact).add(token);
  const [entries, totals] = await Promise.all([reader.blocks([...exact], [...prefixes]), reader.totals()]);

  // Terms numbered; each phrase token slot lists the terms it stands for.
  const termIndex = new Map<string, number>();
  const blocksOfTerm: Block[][] = [];
  for (const e of entries) {
    let t = termIndex.get(e.term);
    if (t === undefined) {
      t = blocksOfTerm.length;
      termIndex.set(e.term, t);
      blocksOfTerm.push([]);
    }
    blocksOfTerm[t]!.push({ ...e, termIndex: t, points: decodeBound(e.bound), data: null, decoded: null });
  }
  for (const list of blocksOfTerm) list.sort((a, b) => a.firstId - b.firstId);
  const terms = [...termIndex.keys()];
  const slots: number[][][] = q.phrases.map((p) =>
    p.tokens.map((token, k) => {
      if (!(p.prefix && k === p.tokens.length - 1)) {
        const t = termIndex.get(token);
        return t === undefined ? [] : [t];
      }
      return terms.flatMap((term, t) => (term.startsWith(token) ? [t] : []));
    }),
  );
  const blocksListed = entries.length;
  const accept = options.accept ?? null;
  const wordsOnly = q.phrases.every((p) => p.tokens.length <= 1 && !p.prefix);
  const input: RankInput = {
    q,
    slots,
    blocksOfTerm,
    reader,
    totals,
    limit,
    accept,
    pacer: new Pacer(),
    unordered: options.unordered,
  };
  // More postings than the window: the newest `window` matches may be fewer than all (SQLite's rank window).
  const window = options.window ?? Number.POSITIVE_INFINITY;
  const overWindow = entries.reduce((n, e) => n + e.count, 0) >= window;
  let capped = false;
  if (overWindow && wordsOnly) {
    const floor = await newestFloor(input, window);
    if (floor !== null) {
      input.floor = floor;
      capped = true;
    }
  } else if (overWindow) input.window = window;
  // Every match is wanted (a page past the bounds' reach): reading every block costs no more than the bounds.
  if (wordsOnly && Number.isFinite(limit)) return { ...(await byBounds(input)), blocksListed, capped };
  const ranked = await everyMatch(input);
  return { ...ranked, blocksListed, capped: capped || ranked.capped };
}
