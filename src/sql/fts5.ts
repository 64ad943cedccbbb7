/**
 * FTS5 fragments: the MATCH string emitted from a parsed query, and the search statements over Hermes'
 * two FTS5 tables (messages_fts: unicode61 words; messages_fts_trigram: substrings).
 */
import { type SQL, sql } from 'drizzle-orm';
import type { RankWindow, SearchOrder, SearchStatements } from '../db/dialect.js';
import { containsPattern } from './like.js';
import { sqliteContentText } from './sqlite-content.js';
import type { QueryNode } from '../search/query.js';

/** The MATCH expression for a parsed query: every phrase quoted, every operator explicit and grouped. */
export function fts5Match(node: QueryNode): string {
  switch (node.kind) {
    case 'phrase':
      return `"${node.text.replace(/"/g, '""')}"${node.prefix ? '*' : ''}`;
    case 'and':
      return `(${node.children.map(fts5Match).join(' AND ')})`;
    case 'or':
      return `(${node.children.map(fts5Match).join(' OR ')})`;
    case 'not':
      return `(${fts5Match(node.left)} NOT ${fts5Match(node.right)})`;
  }
}


const HIT_COLUMNS = sql`m.id, m.session_id, m.role, m.timestamp, m.tool_name, s.source, s.model, s.started_at AS session_started`;

function ftsSearch(
  table: 'messages_fts' | 'messages_fts_trigram',
  match: QueryNode,
  where: SQL,
  order: SearchOrder,
  limit: number,
  offset: number,
  window: RankWindow,
): SQL {
  const fts = sql.raw(table);
  const fromWhere = (node: QueryNode) => sql`FROM ${fts} JOIN messages m ON m.id = ${fts}.rowid JOIN sessions s ON s.id = m.session_id
    WHERE ${fts} MATCH ${fts5Match(node)} ${where}`;
  const from = fromWhere(match);
  if (order !== 'relevance') {
    const direction = sql.raw(order === 'newest' ? 'DESC' : 'ASC');
    return sql`SELECT ${HIT_COLUMNS}, snippet(${fts}, 0, '>>>', '<<<', '...', 40) AS snippet ${from}
      ORDER BY m.timestamp ${direction}, bm25(${fts}), m.id ${direction} LIMIT ${limit} OFFSET ${offset}`;
  }
  // bm25 over every match of a broad query ("the*") is the cost; rank only the newest `rankWindow` matches.
  // FTS5 walks its doclist newest-first by rowid, so finding that window's lower bound is cheap.
  return sql`SELECT ${HIT_COLUMNS}, snippet(${fts}, 0, '>>>', '<<<', '...', 40) AS snippet ${from}
      AND ${fts}.rowid >= COALESCE((SELECT ${fts}.rowid ${fromWhere(window.match)} ORDER BY ${fts}.rowid DESC LIMIT 1 OFFSET ${window.size - 1}), 0)
    ORDER BY bm25(${fts}), ${fts}.rowid LIMIT ${limit} OFFSET ${offset}`;
}

/** Structured content as its JSON text (SQLite's text functions stop at the NUL of "\x00json:"). */
const SQLITE_SEARCHABLE_CONTENT = sqliteContentText('m');

export const sqliteSearch: SearchStatements = {
  words: (match, where, order, limit, offset, window) => ftsSearch('messages_fts', match, where, order, limit, offset, window),
  substrings: (match, where, order, limit, offset, window) =>
    ftsSearch('messages_fts_trigram', match, where, order, limit, offset, window),
  like: (tokens, where, limit, offset) => {
    const clauses = tokens.map((token) => {
      const pattern = containsPattern(token);
      return sql`(${SQLITE_SEARCHABLE_CONTENT} LIKE ${pattern} ESCAPE '\\' OR m.tool_name LIKE ${pattern} ESCAPE '\\'
                  OR m.tool_calls LIKE ${pattern} ESCAPE '\\')`;
    });
    return sql`
      SELECT ${HIT_COLUMNS},
        substr(${SQLITE_SEARCHABLE_CONTENT}, max(1, instr(${SQLITE_SEARCHABLE_CONTENT}, ${tokens[0]!}) - 40), 120) AS snippet
      FROM messages m JOIN sessions s ON s.id = m.session_id
      WHERE (${sql.join(clauses, sql` OR `)}) ${where}
      ORDER BY m.timestamp DESC, m.id DESC
      LIMIT ${limit} OFFSET ${offset}`;
  },
  snippetsInSql: true,
};
