/**
 * Postgres search statements: the parsed query as a tsquery over the generated search_vector (words), as
 * ILIKE predicates over message_search_text() served by the pg_trgm index (substrings), and a newest-first
 * ILIKE scan for short CJK. Snippets are computed in TypeScript from a bounded window of `search_text`.
 */
import { type SQL, sql } from 'drizzle-orm';
import type { MatchPath, SearchOrder, SearchStatements } from '../db/dialect.js';
import type { QueryNode } from '../search/query.js';
import { SNIPPET_HEAD_CHARS } from './fts5.js';
import { containsPattern } from './like.js';

const SEARCH_TEXT = sql`message_search_text(m.content, m.content_json, m.tool_name, m.tool_calls)`;
const HIT_COLUMNS = sql`m.id, m.session_id, m.role, m.timestamp, m.tool_name, s.source, s.model, s.started_at AS session_started`;
/** Rows whose content is at most this many bytes send their whole searchable text for their snippet. */
const WHOLE_TEXT_MAX_BYTES = 65_536;

const lexeme = (token: string) => `'${token.replace(/\\/g, '\\\\').replace(/'/g, "''")}'`;

/** The tsquery text for a parsed query (cast with ::tsquery, so no parser re-cuts the words). */
export function tsqueryText(node: QueryNode): string {
  switch (node.kind) {
    case 'phrase': {
      const parts = node.tokens.map((t, i) => `${lexeme(t)}${node.prefix && i === node.tokens.length - 1 ? ':*' : ''}`);
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

/** The match condition of a query (FROM needs `messages m`, and `q` for words: see `matchFrom`). */
function matchFrom(path: MatchPath, match: QueryNode): { from: SQL; condition: SQL; rank: SQL } {
  if (path === 'words') {
    return {
      from: sql`, CAST(${tsqueryText(match)}::text AS tsquery) q`,
      condition: sql`m.search_vector @@ q`,
      rank: sql`ts_rank(m.search_vector, q) DESC`,
    };
  }
  // Substring matches carry no relevance of their own here: newest first stands in for rank.
  return { from: sql``, condition: substringPredicate(match), rank: sql`m.timestamp DESC` };
}

function orderBy(order: SearchOrder, rank: SQL): SQL {
  if (order === 'newest') return sql`m.timestamp DESC, ${rank}, m.id`;
  if (order === 'oldest') return sql`m.timestamp ASC, ${rank}, m.id`;
  return sql`${rank}, m.id`;
}

const CONTENT_TEXT = sql`COALESCE(m.content, m.content_json::text)`;

export const pgSearch: SearchStatements = {
  capBound: (path, match, where, cap) => {
    const { from, condition } = matchFrom(path, match);
    const sessions = where ? sql`JOIN sessions s ON s.id = m.session_id` : sql``;
    return sql`SELECT m.id AS bound FROM messages m ${sessions} ${from} WHERE ${condition} ${where ?? sql``}
      ORDER BY m.id DESC OFFSET ${cap - 1}::int8 LIMIT 1`;
  },
  page: (path, match, where, order, limit, offset, bound) => {
    const { from, condition, rank } = matchFrom(path, match);
    return sql`SELECT ${HIT_COLUMNS} FROM messages m JOIN sessions s ON s.id = m.session_id ${from}
      WHERE ${condition} ${bound === null ? sql`` : sql`AND m.id >= ${bound}::int8`} ${where ?? sql``}
      ORDER BY ${orderBy(order, rank)}
      LIMIT ${limit}::int8 OFFSET ${offset}::int8`;
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
      return sql`(m.content ILIKE ${pattern} ESCAPE '\\' OR m.content_json::text ILIKE ${pattern} ESCAPE '\\'
                  OR m.tool_name ILIKE ${pattern} ESCAPE '\\' OR m.tool_calls::text ILIKE ${pattern} ESCAPE '\\')`;
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
