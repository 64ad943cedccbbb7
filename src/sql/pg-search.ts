/**
 * Postgres search statements: the parsed query as a tsquery over the generated search_vector (words, ranked
 * by FTS5's BM25 from the vector's positions, search_length and message_search_stats), as ILIKE predicates
 * over message_search_text() served by the pg_trgm index (substrings), and Hermes' newest-first ILIKE scan
 * for short CJK, narrowed by the CJK gram index. Snippets are FTS5's, computed in TypeScript (snippet.ts).
 */
import { type SQL, sql } from 'drizzle-orm';
import { timestamptzToEpochSeconds } from '../codecs/time.js';
import type { MatchPath, SearchOrder, SearchStatements } from '../db/dialect.js';
import { type Op, rows } from '../db/ops.js';
import { type Positions, allPhrases, bm25Score, bm25Weights, countedFrequencies, frequencyFromRank, parseTsvectorPositions, phraseInstances } from '../search/bm25.js';
import type { Phrase, QueryNode } from '../search/query.js';
import { SNIPPET_HEAD_CHARS } from './fts5.js';
import { PostingsCompiler, prefixTerms } from './pg-postings.js';
import { containsPattern, escapeLike } from './like.js';

const SEARCH_TEXT = sql`message_search_text(m.content, m.content_json, m.tool_name, m.tool_calls)`;
const HIT_COLUMNS = sql`m.id, m.session_id, m.role, m.timestamp, m.tool_name, s.source, s.model, s.started_at AS session_started`;
/** Rows whose content is at most this many bytes send their whole searchable text for their snippet. */
const WHOLE_TEXT_MAX_BYTES = 65_536;

const lexemeText = (token: string) => `'${token.replace(/\\/g, '\\\\').replace(/'/g, "''")}'`;

/** The tsquery text for a parsed query (cast with ::tsquery, so no parser re-cuts the words). */
export function tsqueryText(node: QueryNode): string {
  switch (node.kind) {
    case 'phrase': {
      const parts = node.tokens.map((t, i) => `${lexemeText(t)}${node.prefix && i === node.tokens.length - 1 ? ':*' : ''}`);
      return parts.length === 1 ? parts[0]! : `(${parts.join(' <-> ')})`;
    }
    case 'and':
      return `(${node.children.map(tsqueryText).join(' & ')})`;
    case 'or':
      return `(${node.children.map(tsqueryText).join(' | ')})`;
    case 'not':
      return `(${tsqueryText(node.left)} & !${tsqueryText(node.right)})`;
  }
}

/** Substring semantics of FTS5's trigram tokenizer: case-insensitive, each phrase 3+ characters. */
function substringPredicate(node: QueryNode): SQL {
  switch (node.kind) {
    case 'phrase':
      return sql`${SEARCH_TEXT} ILIKE ${containsPattern(node.text)} ESCAPE '\\'`;
    case 'and':
      return sql`(${sql.join(node.children.map(substringPredicate), sql` AND `)})`;
    case 'or':
      return sql`(${sql.join(node.children.map(substringPredicate), sql` OR `)})`;
    case 'not':
      return sql`(${substringPredicate(node.left)} AND NOT ${substringPredicate(node.right)})`;
  }
}

/** The match condition of a query over `messages m` (`from` adds what the condition needs). */
function matchFrom(path: MatchPath, match: QueryNode): { from: SQL; condition: SQL } {
  if (path === 'words') return { from: sql`, CAST(${tsqueryText(match)}::text AS tsquery) q`, condition: sql`m.search_vector @@ q` };
  return { from: sql``, condition: substringPredicate(match) };
}

/** Substring (trigram) matches are not ranked by bm25 here: newest first stands in for relevance. */
function substringOrder(order: SearchOrder): SQL {
  if (order === 'oldest') return sql`m.timestamp ASC, m.id`;
  return sql`m.timestamp DESC, m.id`;
}

const CONTENT_TEXT = sql`COALESCE(m.content, m.content_json::text)`;

const textArray = (items: string[]) => (items.length === 0 ? sql`ARRAY[]::text[]` : sql`ARRAY[${sql.join(items.map((i) => sql`${i}::text`), sql`, `)}]`);

/** The CJK characters of a token as message_cjk_grams() indexes them: each run's adjacent pairs, or the lone character. */
export function cjkGrams(token: string): string[] {
  const grams = new Set<string>();
  for (const run of token.match(CJK_RUNS) ?? []) {
    const chars = [...run];
    if (chars.length === 1) grams.add(chars[0]!);
    for (let i = 0; i + 1 < chars.length; i++) grams.add(chars[i]! + chars[i + 1]!);
  }
  return [...grams];
}
const CJK_RUNS = /[\u3000-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\u{20000}-\u{2a6df}]+/gu;

/** A phrase of one word (not a prefix): its frequency comes from ts_rank, with no positions read. */
const isSingleWord = (p: Phrase) => p.tokens.length === 1 && !p.prefix;

/**
 * What BM25 needs of a candidate row, read from its word vector `v`: `rank_<word>` (ts_rank of each
 * single-word phrase, which gives its frequency, see frequencyFromRank) and `tf`, the positions of the
 * words of longer or prefix phrases as tsvector text (`'word':3A,17A`: setweight marks them, ts_filter
 * keeps only them).
 */
function frequencyColumns(match: QueryNode, v: SQL): { columns: SQL; words: string[] } {
  const phrases = allPhrases(match);
  const words = [...new Set(phrases.filter(isSingleWord).map((p) => p.tokens[0]!))];
  const positional = phrases.filter((p) => !isSingleWord(p) && p.tokens.length > 0);
  const parts = words.map((w, i) => sql`ts_rank('{1,1,1,1}', ${v}, CAST(${lexemeText(w)}::text AS tsquery)) AS ${sql.raw(`rank_${i}`)}`);
  if (positional.length > 0) {
    const exact = [...new Set(positional.flatMap((p) => (p.prefix ? p.tokens.slice(0, -1) : p.tokens)))];
    const prefixes = [...new Set(positional.filter((p) => p.prefix).map((p) => `${escapeLike(p.tokens.at(-1)!)}%`))];
    let marked = sql`setweight(${v}, 'A', ${textArray(exact)})`;
    if (prefixes.length > 0) {
      marked = sql`setweight(${marked}, 'A', ARRAY(SELECT l FROM unnest(tsvector_to_array(${v})) l WHERE l LIKE ANY (${textArray(prefixes)})))`;
    }
    parts.push(sql`ts_filter(${marked}, '{a}')::text AS tf`);
  }
  return { columns: parts.length > 0 ? sql.join(parts, sql`, `) : sql`NULL AS tf`, words };
}

type ScoredRow = { id: number; score: number };

/**
 * BM25's weights for a query: rows and words from message_search_stats, each phrase's document frequency
 * from the postings, counted only when the query has several distinct phrases (with one, it scales every
 * score alike and cannot change the order).
 */
function* postingsWeights(match: QueryNode, compiler: PostingsCompiler): Op<{ idf: number[]; avgdl: number }> {
  const phrases = allPhrases(match);
  const keys = phrases.map((p) => tsqueryText(p));
  const distinct = [...new Map(phrases.map((p, i) => [keys[i]!, p])).values()];
  const counted = distinct.length > 1;
  const hitColumns = counted ? sql`, ${sql.join(distinct.map((p, i) => sql`${compiler.documentCount(p)} AS ${sql.raw(`h${i}`)}`), sql`, `)}` : sql``;
  const [stats] = yield* rows<Record<string, unknown>>(sql`SELECT
      (SELECT COALESCE(sum(docs), 0) FROM message_search_stats)::float8 AS docs,
      (SELECT COALESCE(sum(tokens), 0) FROM message_search_stats)::float8 AS tokens ${hitColumns}`);
  const index = new Map(distinct.map((p, i) => [tsqueryText(p), i]));
  const hits = keys.map((k) => (counted ? Number(stats![`h${index.get(k)}`]) : 1));
  return bm25Weights({ rows: Math.max(1, Number(stats!.docs)), tokens: Number(stats!.tokens), hits });
}

/**
 * BM25 (FTS5's) for candidate rows `{ id, dl, rank_<i>, tf }` (see frequencyColumns). Rows and words come
 * from message_search_stats; each phrase's document frequency is counted only when the query has several
 * distinct phrases (with one, it scales every score alike and cannot change the order).
 */
function* scoreRows(match: QueryNode, words: string[], candidates: Array<Record<string, unknown>>): Op<ScoredRow[]> {
  const phrases = allPhrases(match);
  const queries = phrases.map((p) => tsqueryText(p));
  const distinct = [...new Set(queries)];
  const counted = distinct.length > 1;
  // One count per phrase, each its own index scan: a plain count(*) lets Postgres skip the heap for
  // all-visible pages, where one scan with count(*) FILTER must read every matching row's vector.
  const hitColumns = counted
    ? sql`, ${sql.join(distinct.map((q, i) => sql`(SELECT count(*) FROM messages m WHERE m.search_vector @@ CAST(${q}::text AS tsquery)) AS ${sql.raw(`h${i}`)}`), sql`, `)}`
    : sql``;
  const [stats] = yield* rows<Record<string, unknown>>(sql`SELECT
      (SELECT COALESCE(sum(docs), 0) FROM message_search_stats)::float8 AS docs,
      (SELECT COALESCE(sum(tokens), 0) FROM message_search_stats)::float8 AS tokens ${hitColumns}`);
  const hits = queries.map((q) => (counted ? Number(stats![`h${distinct.indexOf(q)}`]) : 1));
  const weights = bm25Weights({ rows: Math.max(1, Number(stats!.docs)), tokens: Number(stats!.tokens), hits });
  const column = new Map(words.map((w, i) => [w, `rank_${i}`]));
  const phrasesOnly = phrases.every(isSingleWord) && (match.kind === 'phrase' || match.kind === 'and' || match.kind === 'or') && (match.kind === 'phrase' || match.children.every((c) => c.kind === 'phrase'));
  if (phrasesOnly) {
    // The common case, without per-row closures: each phrase is one word whose frequency ts_rank gives.
    const columns = phrases.map((p) => column.get(p.tokens[0]!)!);
    const freq = new Array<number>(phrases.length);
    return candidates.map((c) => {
      for (let i = 0; i < columns.length; i++) freq[i] = frequencyFromRank(Number(c[columns[i]!]));
      return { id: Number(c.id), score: bm25Score(freq, Number(c.dl ?? 0), weights) };
    });
  }
  return candidates.map((c) => {
    const tf = c.tf === null || c.tf === undefined ? '' : String(c.tf);
    let positions: Positions | null = null;
    const instances = (p: Phrase) => {
      if (isSingleWord(p)) return frequencyFromRank(Number(c[column.get(p.tokens[0]!)!]));
      // A one-word prefix (`deploy*`): every position of a kept lexeme is one occurrence, no positions needed.
      if (p.tokens.length === 1) return positionsOfPrefix(tf, p.tokens[0]!);
      positions ??= parseTsvectorPositions(tf);
      return phraseInstances(p, positions);
    };
    return { id: Number(c.id), score: bm25Score(countedFrequencies(match, instances), Number(c.dl ?? 0), weights) };
  });
}

/** Occurrences of lexemes starting with `prefix` in a tsvector's text form (`'word':3A,17A …`). */
function positionsOfPrefix(tf: string, prefix: string): number {
  let n = 0;
  for (const m of tf.matchAll(/'([^']*)':([0-9A-D,]+)/g)) if (m[1]!.startsWith(prefix)) n += m[2]!.split(',').length;
  return n;
}

/** The page's hit rows, in the order of `ids`. */
function* hitRows(ids: number[]): Op<Array<Record<string, unknown>>> {
  if (ids.length === 0) return [];
  const found = yield* rows(sql`SELECT ${HIT_COLUMNS} FROM messages m JOIN sessions s ON s.id = m.session_id
    WHERE m.id IN (${sql.join(ids.map((id) => sql`${id}::int8`), sql`, `)})`);
  const byId = new Map(found.map((r) => [Number(r.id), r]));
  return ids.map((id) => byId.get(id)).filter((r) => r !== undefined);
}

/**
 * Word search ordered as FTS5 orders it. Relevance: BM25 over every match, or over the newest `cap` when
 * there are more (one scan: the newest cap + 1 matches by id; their frequencies are read only after the
 * LIMIT), ties by id. Newest/oldest: by time, and within equal times by BM25 then id; only rows sharing a
 * timestamp with another row of the page need a score.
 */
function* wordsPage(
  match: QueryNode,
  where: SQL | null,
  order: SearchOrder,
  limit: number,
  offset: number,
  cap: number,
): Op<{ rows: Array<Record<string, unknown>>; capped: boolean }> {
  const q = sql`CAST(${tsqueryText(match)}::text AS tsquery)`;
  const sessions = where ? sql`JOIN sessions s ON s.id = m.session_id` : sql``;
  const filter = sql`m.search_vector @@ ${q} ${where ?? sql``}`;
  const end = Math.min(Number.MAX_SAFE_INTEGER, offset + limit);
  if (order === 'relevance') {
    const compiler = new PostingsCompiler(match, yield* prefixTerms(match), cap);
    const page = yield* compiler.rankedPage(where, yield* postingsWeights(match, compiler), offset, limit);
    return { rows: yield* hitRows(page.ids), capped: page.capped };
  }
  const direction = sql.raw(order === 'newest' ? 'DESC' : 'ASC');
  const prefix = yield* rows(sql`SELECT m.id, m.timestamp::text AS t FROM messages m ${sessions} WHERE ${filter}
    ORDER BY m.timestamp ${direction}, m.id LIMIT ${end}::int8`);
  // A group of equal times reaching past the page's end is read whole: rank decides who is in the page.
  const last = prefix.at(-1);
  const tail = last && prefix.length === end
    ? yield* rows(sql`SELECT m.id, m.timestamp::text AS t FROM messages m ${sessions} WHERE ${filter} AND m.timestamp = ${String(last.t)}::timestamptz`)
    : [];
  const time = new Map<number, number>([...prefix, ...tail].map((r) => [Number(r.id), timestamptzToEpochSeconds(String(r.t))]));
  const perTime = new Map<number, number[]>();
  for (const [id, t] of time) perTime.set(t, [...(perTime.get(t) ?? []), id]);
  const tied = [...perTime.values()].filter((ids) => ids.length > 1).flat();
  const scores = new Map<number, number>();
  if (tied.length > 0) {
    const { columns, words } = frequencyColumns(match, sql`m.search_vector`);
    const candidates = yield* rows(sql`SELECT m.id, m.search_length + (m.content_json IS NOT NULL)::int AS dl, ${columns} FROM messages m
      WHERE m.id IN (${sql.join(tied.map((id) => sql`${id}::int8`), sql`, `)})`);
    for (const r of yield* scoreRows(match, words, candidates)) scores.set(r.id, r.score);
  }
  const sign = order === 'newest' ? -1 : 1;
  const ordered = [...time.keys()].sort((a, b) => sign * (time.get(a)! - time.get(b)!) || (scores.get(a) ?? 0) - (scores.get(b) ?? 0) || a - b);
  return { rows: yield* hitRows(ordered.slice(offset, end)), capped: false };
}

export const pgSearch: SearchStatements = {
  *page(path, match, where, order, limit, offset, cap) {
    if (path === 'words') return yield* wordsPage(match, where, order, limit, offset, cap);
    // Substring matches are found as Hermes finds them; their relevance order is newest first (no cap needed).
    const { from, condition } = matchFrom(path, match);
    const found = yield* rows(sql`SELECT ${HIT_COLUMNS} FROM messages m JOIN sessions s ON s.id = m.session_id ${from}
      WHERE ${condition} ${where ?? sql``}
      ORDER BY ${substringOrder(order)}
      LIMIT ${limit}::int8 OFFSET ${offset}::int8`);
    return { rows: found, capped: false };
  },
  pageText: (_path, _match, ids) => {
    // A big row sends only the head of its content: left() reads a prefix of the stored value (no full
    // detoast), where building message_search_text() of a 1 MB row costs milliseconds.
    const big = sql`octet_length(m.content) > ${WHOLE_TEXT_MAX_BYTES}`;
    return sql`SELECT m.id, NULL AS snippet,
        CASE WHEN ${big} THEN left(m.content, ${SNIPPET_HEAD_CHARS}::int) ELSE ${SEARCH_TEXT} END AS search_text,
        COALESCE(${big}, false) AS truncated
      FROM messages m WHERE m.id IN (${sql.join(ids.map((id) => sql`${id}::int8`), sql`, `)})`;
  },
  matchesMessage: (path, match, id) => {
    const { from, condition } = matchFrom(path, match);
    return sql`SELECT 1 AS hit FROM messages m ${from} WHERE ${condition} AND m.id = ${id}::int8`;
  },
  like: (tokens, where, limit, offset) => {
    // Plain-column ILIKEs, so the planner can walk idx_messages_timestamp newest-first and stop after a
    // page (a function or translate() here makes it expect one row and scan everything: 78 ms vs 0.9 ms
    // at 100,000 messages). ILIKE also folds non-ASCII case, where SQLite's LIKE folds ASCII only.
    const clauses = tokens.map((token) => {
      const pattern = containsPattern(token);
      const like = sql`(m.content ILIKE ${pattern} ESCAPE '\\' OR m.content_json::text ILIKE ${pattern} ESCAPE '\\'
                  OR m.tool_name ILIKE ${pattern} ESCAPE '\\' OR m.tool_calls::text ILIKE ${pattern} ESCAPE '\\')`;
      // A token with CJK in it is first narrowed by the CJK gram index (migration 0004): a term that is
      // nowhere costs an index lookup, not a read of every row.
      const grams = cjkGrams(token);
      return grams.length === 0 ? like : sql`(m.search_cjk @> ${textArray(grams)} AND ${like})`;
    });
    return sql`
      SELECT ${HIT_COLUMNS},
        substr(${CONTENT_TEXT}, greatest(1, strpos(${CONTENT_TEXT}, ${tokens[0]!}::text) - 40), 120) AS snippet
      FROM messages m JOIN sessions s ON s.id = m.session_id
      WHERE (${sql.join(clauses, sql` OR `)}) ${where ?? sql``}
      ORDER BY m.timestamp DESC, m.id DESC
      LIMIT ${limit}::int8 OFFSET ${offset}::int8`;
  },
};
