/**
 * FTS5 fragments: the MATCH string emitted from a parsed query, and the search statements over Hermes'
 * two FTS5 tables (messages_fts: unicode61 words; messages_fts_trigram: substrings).
 */
import { type SQL, sql } from 'drizzle-orm';
import type { MatchPath, SearchOrder, SearchStatements } from '../dialect.js';
import { rows } from '../ops.js';
import type { QueryNode } from '../../search/query.js';
import { SNIPPET_HEAD_READ_CHARS } from '../../search/snippet.js';
import { containsPattern } from '../../sql/like.js';
import { sqliteContentText } from './content-expressions.js';

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

/** Rows up to this many bytes get FTS5's own snippet(); larger ones one computed from the head of their text. */
export const NATIVE_SNIPPET_MAX_BYTES = 8192;

/**
 * A rowid bound as FTS5 must see it: better-sqlite3 binds a JS number as REAL, and FTS5 ignores a REAL rowid
 * constraint. It drops `rowid = ?` altogether (every match is returned) and walks the whole doclist for
 * `rowid >= ?` (SQLite filters afterwards); an INTEGER is used.
 */
const rowidValue = (n: number) => sql`CAST(${n} AS INTEGER)`;

const HIT_COLUMNS = sql`m.id, m.session_id, m.role, m.timestamp, m.tool_name, s.source, s.model, s.started_at AS session_started`;
const TABLES: Record<MatchPath, SQL> = { words: sql.raw('messages_fts'), substrings: sql.raw('messages_fts_trigram') };

export const sqliteSearch: SearchStatements = {
  *page(path, match, where, order, limit, offset, cap) {
    const fts = TABLES[path];
    let bound: number | null = null;
    if (order === 'relevance') {
      // The cap's bound: the id of the cap-th newest match, found by walking the FTS5 doclist newest-first
      // (without filters the doclist alone answers).
      const from = where
        ? sql`FROM ${fts} JOIN messages m ON m.id = ${fts}.rowid JOIN sessions s ON s.id = m.session_id WHERE ${fts} MATCH ${fts5Match(match)} ${where}`
        : sql`FROM ${fts} WHERE ${fts} MATCH ${fts5Match(match)}`;
      const [row] = yield* rows<{ bound: number }>(
        sql`SELECT ${fts}.rowid AS bound ${from} ORDER BY ${fts}.rowid DESC LIMIT 1 OFFSET ${cap - 1}`,
      );
      bound = row ? Number(row.bound) : null;
    }
    const page = yield* rows(sql`SELECT ${HIT_COLUMNS}
      FROM ${fts} JOIN messages m ON m.id = ${fts}.rowid JOIN sessions s ON s.id = m.session_id
      WHERE ${fts} MATCH ${fts5Match(match)} ${bound === null ? sql`` : sql`AND ${fts}.rowid >= ${rowidValue(bound)}`} ${where ?? sql``}
      ORDER BY ${sqliteOrder(order)} LIMIT ${limit} OFFSET ${offset}`);
    return { rows: page, capped: bound !== null };
  },
  // FTS5's snippet() runs inside the read, synchronously: a few rows per read keep each piece short.
  pageTextChunk: 8,
  // A head's read loads the whole row, synchronously: a few rows per read keep each piece short.
  contextTextChunk: 16,
  pageText: (path, match, ids) => {
    const fts = TABLES[path];
    // CASE evaluates one branch: FTS5 never sees a big row, and a small row is never cut.
    const small = sql`octet_length(${fts}.content) <= ${NATIVE_SNIPPET_MAX_BYTES}`;
    return sql`SELECT ${fts}.rowid AS id,
        CASE WHEN ${small} THEN snippet(${fts}, 0, '>>>', '<<<', '...', 40) END AS snippet,
        CASE WHEN ${small} THEN NULL ELSE substr(${fts}.content, 1, ${SNIPPET_HEAD_READ_CHARS}) END AS search_text
      FROM ${fts} WHERE ${fts} MATCH ${fts5Match(match)} AND ${fts}.rowid IN (${sql.join(
        ids.map((id) => sql`${id}`),
        sql`, `,
      )})`;
  },
  *matchesMessage(path, match, id) {
    const fts = TABLES[path];
    const found = yield* rows(
      sql`SELECT 1 AS hit FROM ${fts} WHERE ${fts} MATCH ${fts5Match(match)} AND ${fts}.rowid = ${rowidValue(id)}`,
    );
    return found.length > 0;
  },
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
      WHERE (${sql.join(clauses, sql` OR `)}) ${where ?? sql``}
      ORDER BY m.timestamp DESC, m.id DESC
      LIMIT ${limit} OFFSET ${offset}`;
  },
};

/** Hermes' orders: `ORDER BY rank` (FTS5 breaks ties by rowid), or by time with rank and then id as tie-breaks. */
function sqliteOrder(order: SearchOrder): SQL {
  if (order === 'newest') return sql`m.timestamp DESC, rank, m.id`;
  if (order === 'oldest') return sql`m.timestamp ASC, rank, m.id`;
  return sql`rank`;
}

/** Structured content as its JSON text (SQLite's text functions stop at the NUL of "\x00json:"). */
const SQLITE_SEARCHABLE_CONTENT = sqliteContentText('m');
