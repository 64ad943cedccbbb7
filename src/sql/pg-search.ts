/**
 * Postgres search statements: the parsed query as a tsquery over the generated search_vector (words), as
 * ILIKE predicates over message_search_text() served by the pg_trgm index (substrings), and a newest-first
 * ILIKE scan for short CJK. Snippets are computed in TypeScript from `search_text`.
 */
import { type SQL, sql } from 'drizzle-orm';
import type { RankWindow, SearchOrder, SearchStatements } from '../db/dialect.js';
import type { QueryNode } from '../search/query.js';
import { containsPattern } from './like.js';

const SEARCH_TEXT = sql`message_search_text(m.content, m.content_json, m.tool_name, m.tool_calls)`;
const HIT_COLUMNS = sql`m.id, m.session_id, m.role, m.timestamp, m.tool_name, s.source, s.model,
  s.started_at AS session_started, ${SEARCH_TEXT} AS search_text`;

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

function orderBy(order: SearchOrder, relevance: SQL): SQL {
  if (order === 'newest') return sql`m.timestamp DESC, m.id DESC`;
  if (order === 'oldest') return sql`m.timestamp ASC, m.id ASC`;
  return relevance;
}


const CONTENT_TEXT = sql`COALESCE(m.content, m.content_json::text)`;

export const pgSearch: SearchStatements = {
  words: (match, where, order, limit, offset, window: RankWindow) => {
    const fromWhere = (node: QueryNode) => sql`FROM messages m JOIN sessions s ON s.id = m.session_id,
      CAST(${tsqueryText(node)}::text AS tsquery) q WHERE m.search_vector @@ q ${where}`;
    // As on SQLite, relevance ranks the newest matches only; the bound comes from walking the primary key
    // newest-first with the relaxed query (no phrase positions to re-check), which stops early.
    const bound =
      order === 'relevance'
        ? sql`AND m.id >= COALESCE((SELECT m.id ${fromWhere(window.match)} ORDER BY m.id DESC OFFSET ${window.size - 1}::int8 LIMIT 1), 0)`
        : sql``;
    return sql`SELECT ${HIT_COLUMNS} ${fromWhere(match)} ${bound}
      ORDER BY ${orderBy(order, sql`ts_rank(m.search_vector, q) DESC, m.id`)}
      LIMIT ${limit}::int8 OFFSET ${offset}::int8`;
  },
  substrings: (match, where, order, limit, offset) => sql`
    SELECT ${HIT_COLUMNS}
    FROM messages m JOIN sessions s ON s.id = m.session_id
    WHERE ${substringPredicate(match)} ${where}
    ORDER BY ${orderBy(order, sql`m.timestamp DESC, m.id DESC`)}
    LIMIT ${limit}::int8 OFFSET ${offset}::int8`,
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
      SELECT m.id, m.session_id, m.role, m.timestamp, m.tool_name, s.source, s.model, s.started_at AS session_started,
        substr(${CONTENT_TEXT}, greatest(1, strpos(${CONTENT_TEXT}, ${tokens[0]!}::text) - 40), 120) AS snippet
      FROM messages m JOIN sessions s ON s.id = m.session_id
      WHERE (${sql.join(clauses, sql` OR `)}) ${where}
      ORDER BY m.timestamp DESC, m.id DESC
      LIMIT ${limit}::int8 OFFSET ${offset}::int8`;
  },
  snippetsInSql: false,
};
