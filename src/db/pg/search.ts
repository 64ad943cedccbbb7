/**
 * Postgres search statements: word queries over the postings (message_search_terms, see postings.ts), ranked
 * by FTS5's BM25 with message_search_stats' totals; substring queries as ILIKE predicates over
 * message_search_text() served by the pg_trgm index; Hermes' newest-first ILIKE scan for short CJK, narrowed
 * by the CJK gram index. Snippets are FTS5's, computed in TypeScript (snippet.ts).
 */
import { type SQL, sql } from 'drizzle-orm';
import { timestamptzToEpochSeconds } from '../../codecs/time.js';
import type { MatchPath, SearchOrder, SearchStatements } from '../dialect.js';
import { type Op, rows } from '../ops.js';
import { bm25Score } from '../../search/bm25.js';
import type { QueryNode } from '../../search/query.js';
import { SNIPPET_HEAD_READ_CHARS } from '../../search/snippet.js';
import { PostingsCompiler, prefixTerms } from './postings.js';
import { containsPattern } from '../../sql/like.js';
import type { QualifiedNames } from '../../sql/tables.js';

/** message_search_text() of the row aliased m, called by its qualified name. */
const searchText = (n: QualifiedNames) => n.searchText(sql`m.content, m.content_json, m.tool_name, m.tool_calls`);
const HIT_COLUMNS = sql`m.id, m.session_id, m.role, m.timestamp, m.tool_name, s.source, s.model, s.started_at AS session_started`;
/** Rows whose content is at most this many bytes send their whole searchable text for their snippet. */
const WHOLE_TEXT_MAX_BYTES = 65_536;

const lexemeText = (token: string) => `'${token.replace(/\\/g, '\\\\').replace(/'/g, "''")}'`;

/** The tsquery text for a parsed query (cast with ::tsquery, so no parser re-cuts the words). */
export function tsqueryText(node: QueryNode): string {
  switch (node.kind) {
    case 'phrase': {
      const parts = node.tokens.map(
        (t, i) => `${lexemeText(t)}${node.prefix && i === node.tokens.length - 1 ? ':*' : ''}`,
      );
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
function substringPredicate(n: QualifiedNames, node: QueryNode): SQL {
  switch (node.kind) {
    case 'phrase':
      return sql`${searchText(n)} ILIKE ${containsPattern(node.text)} ESCAPE '\\'`;
    case 'and':
      return sql`(${sql.join(
        node.children.map((c) => substringPredicate(n, c)),
        sql` AND `,
      )})`;
    case 'or':
      return sql`(${sql.join(
        node.children.map((c) => substringPredicate(n, c)),
        sql` OR `,
      )})`;
    case 'not':
      return sql`(${substringPredicate(n, node.left)} AND NOT ${substringPredicate(n, node.right)})`;
  }
}

/** The match condition of a query over `messages m` (`from` adds what the condition needs). */
function matchFrom(n: QualifiedNames, path: MatchPath, match: QueryNode): { from: SQL; condition: SQL } {
  if (path === 'words')
    return { from: sql`, CAST(${tsqueryText(match)}::text AS tsquery) q`, condition: sql`m.search_vector @@ q` };
  return { from: sql``, condition: substringPredicate(n, match) };
}

/** Substring (trigram) matches are not ranked by bm25 here: newest first stands in for relevance. */
function substringOrder(order: SearchOrder): SQL {
  if (order === 'oldest') return sql`m.timestamp ASC, m.id`;
  return sql`m.timestamp DESC, m.id`;
}

const CONTENT_TEXT = sql`COALESCE(m.content, m.content_json::text)`;

const textArray = (items: string[]) =>
  items.length === 0
    ? sql`ARRAY[]::text[]`
    : sql`ARRAY[${sql.join(
        items.map((i) => sql`${i}::text`),
        sql`, `,
      )}]`;

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

/** The page's hit rows, in the order of `ids`. */
function* hitRows(n: QualifiedNames, ids: number[]): Op<Array<Record<string, unknown>>> {
  if (ids.length === 0) return [];
  const found = yield* rows(sql`SELECT ${HIT_COLUMNS} FROM ${n.messages} m JOIN ${n.sessions} s ON s.id = m.session_id
    WHERE m.id IN (${sql.join(
      ids.map((id) => sql`${id}::int8`),
      sql`, `,
    )})`);
  const byId = new Map(found.map((r) => [Number(r.id), r]));
  return ids.map((id) => byId.get(id)).filter((r) => r !== undefined);
}

/**
 * Word search ordered as FTS5 orders it, from the postings (postings.ts). Relevance: BM25 over every match,
 * or over the newest `cap` when there are more, ties by id. Newest/oldest: by time, and within equal times by
 * BM25 then id; only rows sharing a timestamp with another row of the page need a score.
 */
function* wordsPage(
  n: QualifiedNames,
  match: QueryNode,
  where: SQL | null,
  order: SearchOrder,
  limit: number,
  offset: number,
  cap: number,
): Op<{ rows: Array<Record<string, unknown>>; capped: boolean }> {
  const end = Math.min(Number.MAX_SAFE_INTEGER, offset + limit);
  const compiler = new PostingsCompiler(n, match, yield* prefixTerms(n, match), cap);
  if (order === 'relevance') {
    const page = yield* compiler.rankedPage(where, offset, limit);
    return { rows: yield* hitRows(n, page.ids), capped: page.capped };
  }
  // By time: the first `end` matches in id order, then every match further in id order whose time reaches the
  // edge of those (their oldest time; oldest first: their newest). Ids follow time in a store written in order,
  // so there are few or none. They are found from whichever side is smaller: the messages in that stretch of
  // time (idx_messages_timestamp), checked against the query, or the query's matches beyond the page by id. A
  // store whose times run against its ids falls back to a scan in time order.
  const newest = order === 'newest';
  const timed = [...(yield* compiler.firstById(where, newest, end))];
  if (timed.length === end && end > 0) {
    const epoch = (t: string) => timestamptzToEpochSeconds(t);
    const edge = timed.reduce((a, b) => (newest ? (epoch(b.t) < epoch(a.t) ? b : a) : epoch(b.t) > epoch(a.t) ? b : a));
    const lastId = timed.at(-1)!.id;
    // The page spans `span` ids; as many messages lie in its stretch of time when ids follow time, against
    // about docs * end / span matches of the query beyond it (each costing a few index reads more).
    const span = Math.abs(timed[0]!.id - lastId) + 1;
    const [stats] = yield* rows<{ docs: string | number }>(
      sql`SELECT COALESCE(sum(docs), 0) AS docs FROM ${n.messageSearchStats}`,
    );
    if (span * span > 5 * Number(stats!.docs) * end) {
      timed.push(...(yield* compiler.matchesBeyond(where, lastId, newest, edge.t)));
    } else {
      // Walked in time order from the edge on idx_messages_timestamp (ORDER BY keeps a generic plan on it).
      const others = yield* rows<{ id: string | number }>(sql`SELECT m.id FROM ${n.messages} m
        WHERE m.timestamp ${sql.raw(newest ? '>=' : '<=')} ${edge.t}::timestamptz AND m.id ${sql.raw(newest ? '<' : '>')} ${lastId}::int8
        ORDER BY m.timestamp ${sql.raw(newest ? 'ASC' : 'DESC')} LIMIT ${timeChecks(cap) + 1}::int8`);
      if (others.length > timeChecks(cap)) return yield* timeScanPage(n, compiler, match, where, order, limit, offset);
      timed.push(
        ...(yield* compiler.matchesAmong(
          where,
          others.map((r) => Number(r.id)),
        )),
      );
    }
  }
  const time = new Map<number, number>(timed.map((r) => [r.id, timestamptzToEpochSeconds(r.t)]));
  return { rows: yield* hitRows(n, yield* byTimeThenRank(compiler, order, time, offset, end)), capped: false };
}

/** Messages checked one by one against the query before a newest/oldest page falls back to a time scan: twice the rank window (the ranking budget). */
const timeChecks = (cap: number) => 2 * cap;

/** Newest/oldest by a scan in time order filtered by the word index: for stores whose times run against their ids. */
function* timeScanPage(
  n: QualifiedNames,
  compiler: PostingsCompiler,
  match: QueryNode,
  where: SQL | null,
  order: SearchOrder,
  limit: number,
  offset: number,
): Op<{ rows: Array<Record<string, unknown>>; capped: boolean }> {
  const q = sql`CAST(${tsqueryText(match)}::text AS tsquery)`;
  const sessions = where ? sql`JOIN ${n.sessions} s ON s.id = m.session_id` : sql``;
  const filter = sql`m.search_vector @@ ${q} ${where ?? sql``}`;
  const end = Math.min(Number.MAX_SAFE_INTEGER, offset + limit);
  const direction = sql.raw(order === 'newest' ? 'DESC' : 'ASC');
  const prefix = yield* rows(sql`SELECT m.id, m.timestamp::text AS t FROM ${n.messages} m ${sessions} WHERE ${filter}
    ORDER BY m.timestamp ${direction}, m.id LIMIT ${end}::int8`);
  // A group of equal times reaching past the page's end is read whole: rank decides who is in the page.
  const last = prefix.at(-1);
  const tail =
    last && prefix.length === end
      ? yield* rows(
          sql`SELECT m.id, m.timestamp::text AS t FROM ${n.messages} m ${sessions} WHERE ${filter} AND m.timestamp = ${String(last.t)}::timestamptz`,
        )
      : [];
  const time = new Map<number, number>(
    [...prefix, ...tail].map((r) => [Number(r.id), timestamptzToEpochSeconds(String(r.t))]),
  );
  return { rows: yield* hitRows(n, yield* byTimeThenRank(compiler, order, time, offset, end)), capped: false };
}

/** Ids ordered by time (newest or oldest first), equal times by BM25 then id (Hermes' ORDER BY), sliced to the page. */
function* byTimeThenRank(
  compiler: PostingsCompiler,
  order: SearchOrder,
  time: Map<number, number>,
  offset: number,
  end: number,
): Op<number[]> {
  const perTime = new Map<number, number[]>();
  for (const [id, t] of time) {
    const group = perTime.get(t);
    if (group) group.push(id);
    else perTime.set(t, [id]);
  }
  const tied = [...perTime.values()].filter((ids) => ids.length > 1).flat();
  const scores = new Map<number, number>();
  if (tied.length > 0) {
    const weights = yield* compiler.weights();
    const freq = new Array<number>(weights.idf.length);
    for (const r of yield* compiler.frequenciesOf(tied)) {
      for (let j = 0; j < freq.length; j++) freq[j] = Number(r[`f${j}`] ?? 0);
      scores.set(Number(r.id), bm25Score(freq, Number(r.dl ?? 0), weights));
    }
  }
  const sign = order === 'newest' ? -1 : 1;
  const ordered = [...time.keys()].sort(
    (a, b) => sign * (time.get(a)! - time.get(b)!) || (scores.get(a) ?? 0) - (scores.get(b) ?? 0) || a - b,
  );
  return ordered.slice(offset, end);
}

/** The search statements over the tables `n` names (the store's schema). */
export function pgSearch(n: QualifiedNames): SearchStatements {
  return {
    *page(path, match, where, order, limit, offset, cap) {
      if (path === 'words') return yield* wordsPage(n, match, where, order, limit, offset, cap);
      // Substring matches are found as Hermes finds them; their relevance order is newest first (no cap needed).
      const { from, condition } = matchFrom(n, path, match);
      const found =
        yield* rows(sql`SELECT ${HIT_COLUMNS} FROM ${n.messages} m JOIN ${n.sessions} s ON s.id = m.session_id ${from}
        WHERE ${condition} ${where ?? sql``}
        ORDER BY ${substringOrder(order)}
        LIMIT ${limit}::int8 OFFSET ${offset}::int8`);
      return { rows: found, capped: false };
    },
    // The read only fetches text (snippets are computed in TypeScript): one read for the page.
    pageTextChunk: 100,
    // Heads are read by the server (or PGlite's thread), which reads only a row's first bytes.
    contextTextChunk: 100,
    pageText: (_path, _match, ids) => {
      // A big row sends only the head of its content: left() reads a prefix of the stored value (no full
      // detoast), where building message_search_text() of a 1 MB row costs milliseconds. The tool columns
      // follow the head as they follow the content in the indexed text, so that the text's first
      // SNIPPET_HEAD_CHARS characters are those SQLite's FTS5 table holds.
      const big = sql`octet_length(m.content) > ${WHOLE_TEXT_MAX_BYTES}`;
      const head = n.searchText(sql`left(m.content, ${SNIPPET_HEAD_READ_CHARS}::int), NULL, m.tool_name, m.tool_calls`);
      return sql`SELECT m.id, NULL AS snippet,
          CASE WHEN ${big} THEN ${head} ELSE ${searchText(n)} END AS search_text
        FROM ${n.messages} m WHERE m.id IN (${sql.join(
          ids.map((id) => sql`${id}::int8`),
          sql`, `,
        )})`;
    },
    *matchesMessage(path, match, id) {
      const { from, condition } = matchFrom(n, path, match);
      const found = yield* rows(
        sql`SELECT 1 AS hit FROM ${n.messages} m ${from} WHERE ${condition} AND m.id = ${id}::int8`,
      );
      return found.length > 0;
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
        FROM ${n.messages} m JOIN ${n.sessions} s ON s.id = m.session_id
        WHERE (${sql.join(clauses, sql` OR `)}) ${where ?? sql``}
        ORDER BY m.timestamp DESC, m.id DESC
        LIMIT ${limit}::int8 OFFSET ${offset}::int8`;
    },
  };
}
