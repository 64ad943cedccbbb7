/**
 * Message search on MySQL/MariaDB: word and substring queries over the block index (search-blocks.ts, migration
 * 0007), ranked by the shared core as FTS5 ranks them (src/search/rank-postings.ts), every read of a search in
 * one snapshot (Runner.snapshot); Hermes' newest-first LIKE scan for short CJK. Snippets are FTS5's, computed in
 * TypeScript from the page's text (snippet.ts), as on Postgres.
 */
import { type SQL, sql } from 'drizzle-orm';
import { timestamptzToEpochSeconds } from '../../codecs/time.js';
import { DatabaseError, MigrationError } from '../../errors.js';
import { TIME_REST, type TimeReads, pageByTime } from '../blocks-page.js';
import type { SearchStatements, SnapshotRead } from '../dialect.js';
import { type Op, exec, rows } from '../ops.js';
import { evaluateRow } from '../../search/fts5-match.js';
import { rankPostings } from '../../search/rank-postings.js';
import { SNIPPET_HEAD_READ_CHARS } from '../../search/snippet.js';
import { containsPattern } from '../../sql/like.js';
import type { TableNames } from '../../sql/tables.js';
import { idList } from './block-rows.js';
import { MysqlBlockIndex, searchableText } from './search-blocks.js';

/** What the MySQL dialect lends its search statements. */
export interface MysqlSearchHelpers {
  /** The binary string of `expr` with ASCII letters (only) lower-cased, as Hermes' LIKE folds. */
  asciiLower(expr: SQL): SQL;
  /** Hermes' LIKE of an `asciiLower`ed expression (`\` as the escape character). */
  likeLowered(lowered: SQL, pattern: string): SQL;
  /** Content as searchable text for Hermes' LIKE path: plain text, or the JSON of structured content. */
  contentText(alias: string): SQL;
}

const HIT_COLUMNS = sql`m.id, m.session_id, m.role, m.timestamp, m.tool_name, s.source, s.model, s.started_at AS session_started`;
/** Rows whose content is at most this many bytes send their whole searchable text for their snippet. */
const WHOLE_TEXT_MAX_BYTES = 65_536;
/** MySQL's "table doesn't exist" (a store whose history lacks migration 0007). */
const NO_SUCH_TABLE = 1146;
/**
 * The server's refusals of a write: no privilege (1142, 1143), a read-only server or transaction (1290, 1792).
 * A user who may only read searches with the queued messages tokenized in memory (search-blocks.ts' recent).
 */
const WRITE_REFUSED = new Set([1142, 1143, 1290, 1792]);

/** The text FTS5 indexes for a message: content, tool name and tool calls joined by spaces, NULL as empty. */
const searchText = (a: string) =>
  sql.raw(`CONVERT(CONCAT(
    COALESCE(${a}.content, '') COLLATE utf8mb4_bin, ' ',
    COALESCE(CONVERT(${a}.tool_name USING utf8mb4) COLLATE utf8mb4_bin, ''), ' ',
    COALESCE(${a}.tool_calls, '') COLLATE utf8mb4_bin) USING utf8mb4)`);

/** The page's hit rows, in the order of `ids`. */
function* hitRows(t: TableNames, ids: number[]): Op<Array<Record<string, unknown>>> {
  if (ids.length === 0) return [];
  const found = yield* rows(sql`SELECT ${HIT_COLUMNS} FROM ${t.messages} m JOIN ${t.sessions} s ON s.id = m.session_id
    WHERE m.id IN (${idList(ids)})`);
  const byId = new Map(found.map((r) => [Number(r.id), r]));
  return ids.map((id) => byId.get(id)).filter((r) => r !== undefined);
}

/** The two reads a page by time asks of MySQL (blocks-page.ts). */
function timeReads(t: TableNames, where: SQL | null): TimeReads {
  return {
    *times(ids) {
      const found =
        yield* rows(sql`SELECT m.id, m.timestamp AS t FROM ${t.messages} m JOIN ${t.sessions} s ON s.id = m.session_id
        WHERE m.id IN (${idList(ids)}) ${where ?? sql``}`);
      return found.map((r) => ({ id: Number(r.id), epoch: timestamptzToEpochSeconds(String(r.t)), text: String(r.t) }));
    },
    *reaching(edge, last, newest) {
      const found = yield* rows(sql`SELECT m.id FROM ${t.messages} m JOIN ${t.sessions} s ON s.id = m.session_id
        WHERE m.timestamp ${sql.raw(newest ? '>=' : '<=')} ${edge} AND m.id ${sql.raw(newest ? '<' : '>')} ${last}
        ${where ?? sql``} LIMIT ${TIME_REST + 1}`);
      return found.map((r) => Number(r.id));
    },
  };
}

/** The search statements over our tables. */
export function mysqlSearch(t: TableNames, helpers: MysqlSearchHelpers): SearchStatements {
  const index = new MysqlBlockIndex(t);
  /** False once the server refused this user a write of the index: searches read it as it is. */
  let writable = true;
  return {
    page() {
      throw new Error('MySQL ranks word and substring queries with blocksPage');
    },
    async blocksPage(read: SnapshotRead, path, query, where, order, limit, offset, cap) {
      const end = Math.min(Number.MAX_SAFE_INTEGER, offset + limit);
      const reader = index.reader(path, read);
      if (order !== 'relevance') {
        // By time: every match ranked (bm25 breaks ties of time), then the page found from the newest ids.
        const ranked = await rankPostings(query, reader, Number.POSITIVE_INFINITY, path, { unordered: true });
        const all = ranked.byId ?? { ids: new Float64Array(0), scores: new Float64Array(0) };
        const page = await pageByTime(read, timeReads(t, where), all, order === 'newest', end);
        return { rows: await read(hitRows(t, page.slice(offset))), capped: false };
      }
      // The filters, asked of a few candidates at a time, best first.
      const accept =
        where === null
          ? undefined
          : async (ids: number[]) => {
              const found = await read(
                rows(sql`SELECT m.id FROM ${t.messages} m JOIN ${t.sessions} s ON s.id = m.session_id
                  WHERE m.id IN (${idList(ids)}) ${where}`),
              );
              return new Set(found.map((r) => Number(r.id)));
            };
      const ranked = await rankPostings(query, reader, end, path, { accept, window: cap });
      return { rows: await read(hitRows(t, ranked.ids.slice(offset, end))), capped: ranked.capped };
    },
    *catchUp() {
      if (!writable) return false;
      try {
        return yield* index.catchUp();
      } catch (error) {
        const failure = DatabaseError.from(error);
        const errno = (error as { errno?: unknown } | null)?.errno;
        // MySQL rolls back the refused statement, not the transaction: what the piece wrote before it goes too.
        if (WRITE_REFUSED.has(errno as number)) {
          writable = false;
          yield* exec(sql`ROLLBACK`);
          return false;
        }
        if (errno === NO_SUCH_TABLE || (failure instanceof DatabaseError && failure.driverCode === 'ER_NO_SUCH_TABLE'))
          throw new MigrationError(
            'SEARCH_NEEDS_MIGRATION',
            `this store's search reads the block index of migration 0007_message_search_blocks, which its history does not record: migrate it (openStore without { migrate: false }, or \`hermes-sessiondb migrate\`)`,
            { cause: error },
          );
        throw error;
      }
    },
    // The read only fetches text (snippets are computed in TypeScript): one read for the page.
    pageTextChunk: 100,
    // Heads are read by the server, off the event loop.
    contextTextChunk: 100,
    pageText: (_path, _match, ids) => {
      // A big row sends only the head of its content, followed by the tool columns as in the indexed text.
      const head = sql.raw(`CONVERT(CONCAT(
          LEFT(m.content, ${SNIPPET_HEAD_READ_CHARS}) COLLATE utf8mb4_bin, ' ',
          COALESCE(CONVERT(m.tool_name USING utf8mb4) COLLATE utf8mb4_bin, ''), ' ',
          COALESCE(m.tool_calls, '') COLLATE utf8mb4_bin) USING utf8mb4)`);
      return sql`SELECT m.id, NULL AS snippet,
          CASE WHEN OCTET_LENGTH(m.content) > ${WHOLE_TEXT_MAX_BYTES} THEN ${head} ELSE ${searchText('m')} END AS search_text
        FROM ${t.messages} m WHERE m.id IN (${idList(ids)})`;
    },
    // Evaluated as the index sees the message (the library's tokenizer), so verification agrees with search.
    *matchesMessage(path, match, id) {
      const [row] = yield* rows(
        sql`SELECT m.content, m.tool_name, m.tool_calls FROM ${t.messages} m WHERE m.id = ${id}`,
      );
      return row !== undefined && evaluateRow(match, searchableText(row), path).match;
    },
    like: (tokens, where, limit, offset) => {
      const content = helpers.contentText('m');
      // Tokens without ASCII letters (CJK, digits, punctuation) match the folded text exactly where they match
      // the text itself: then no fold, a plain scan of the binary columns.
      const fold = tokens.some((token) => /[A-Za-z]/.test(token));
      const clauses = tokens.map((token) => {
        const pattern = containsPattern(token);
        if (!fold) {
          const binary = sql`CAST(${pattern} AS BINARY) ESCAPE '\\\\'`;
          return sql`(${content} LIKE ${binary} OR m.tool_name LIKE ${binary} OR m.tool_calls LIKE ${binary})`;
        }
        return sql`(${helpers.likeLowered(sql`f.content`, pattern)} OR ${helpers.likeLowered(sql`f.tool_name`, pattern)}
                    OR ${helpers.likeLowered(sql`f.tool_calls`, pattern)})`;
      });
      // Each column is folded once, in a derived table that the server merges into the query, not once per
      // token: the fold is 26 REPLACEs, and a query may hold hundreds of tokens.
      const folded = fold
        ? sql`JOIN (SELECT id, ${helpers.asciiLower(content)} AS content,
            ${helpers.asciiLower(sql`m.tool_name`)} AS tool_name, ${helpers.asciiLower(sql`m.tool_calls`)} AS tool_calls
          FROM ${t.messages} m) f ON f.id = m.id`
        : sql``;
      return sql`
        SELECT ${HIT_COLUMNS},
          SUBSTRING(${content}, GREATEST(1, LOCATE(${tokens[0]!}, ${content}) - 40), 120) AS snippet
        FROM ${t.messages} m JOIN ${t.sessions} s ON s.id = m.session_id
        ${folded}
        WHERE (${sql.join(clauses, sql` OR `)}) ${where ?? sql``}
        ORDER BY m.timestamp DESC, m.id DESC
        LIMIT ${limit} OFFSET ${offset}`;
    },
  };
}
