/**
 * Postgres search statements: word and substring queries over the block index (search-blocks.ts), ranked by the
 * shared core as FTS5 ranks them (src/search/rank-postings.ts), in one snapshot; Hermes' newest-first ILIKE
 * scan for short CJK, narrowed by the CJK gram index. Snippets are FTS5's, computed in TypeScript (snippet.ts).
 */
import { type SQL, sql } from 'drizzle-orm';
import { timestamptzToEpochSeconds } from '../../codecs/time.js';
import { DatabaseError, MigrationError } from '../../errors.js';
import { TIME_REST, type TimeReads, pageByTime } from '../blocks-page.js';
import type { SearchStatements } from '../dialect.js';
import { type Op, rows } from '../ops.js';
import { evaluateRow } from '../../search/fts5-match.js';
import { rankPostings } from '../../search/rank-postings.js';
import { SNIPPET_HEAD_READ_CHARS } from '../../search/snippet.js';
import { PgBlockIndex, idIn } from './search-blocks.js';
import { searchableText } from './searchable-text.js';
import { containsPattern } from '../../sql/like.js';
import type { QualifiedNames } from '../../sql/tables.js';

const HIT_COLUMNS = sql`m.id, m.session_id, m.role, m.timestamp, m.tool_name, s.source, s.model, s.started_at AS session_started`;
/** Rows whose content is at most this many bytes send their whole searchable text for their snippet. */
const WHOLE_TEXT_MAX_BYTES = 65_536;

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

/** Postgres' "relation does not exist". */
const UNDEFINED_TABLE = '42P01';

/** The two reads a page by time asks of Postgres (blocks-page.ts). */
function timeReads(n: QualifiedNames, where: SQL | null): TimeReads {
  return {
    *times(ids) {
      const found =
        yield* rows(sql`SELECT m.id, m.timestamp::text AS t FROM ${n.messages} m JOIN ${n.sessions} s ON s.id = m.session_id
        WHERE ${idIn(sql`m.id`, ids)} ${where ?? sql``}`);
      return found.map((r) => ({ id: Number(r.id), epoch: timestamptzToEpochSeconds(String(r.t)), text: String(r.t) }));
    },
    *reaching(edge, last, newest) {
      const found = yield* rows(sql`SELECT m.id FROM ${n.messages} m JOIN ${n.sessions} s ON s.id = m.session_id
        WHERE m.timestamp ${sql.raw(newest ? '>=' : '<=')} ${edge}::timestamptz
          AND m.id ${sql.raw(newest ? '<' : '>')} ${last}::int8 ${where ?? sql``}
        LIMIT ${TIME_REST + 1}::int8`);
      return found.map((r) => Number(r.id));
    },
  };
}

/** The search statements over the tables `n` names (the store's schema). */
export function pgSearch(n: QualifiedNames): SearchStatements {
  const index = new PgBlockIndex(n);
  return {
    page() {
      throw new Error('Postgres ranks word and substring queries with blocksPage');
    },
    async blocksPage(read, path, query, where, order, limit, offset, cap) {
      const end = Math.min(Number.MAX_SAFE_INTEGER, offset + limit);
      const reader = index.reader(path, read);
      if (order !== 'relevance') {
        // By time: every match ranked (bm25 breaks ties of time), then the page found from the newest ids.
        const ranked = await rankPostings(query, reader, Number.POSITIVE_INFINITY, path, { unordered: true });
        const all = ranked.byId ?? { ids: new Float64Array(0), scores: new Float64Array(0) };
        const page = await pageByTime(read, timeReads(n, where), all, order === 'newest', end);
        return { rows: await read(hitRows(n, page.slice(offset))), capped: false };
      }
      // The filters, asked of a few candidates at a time, best first.
      const accept =
        where === null
          ? undefined
          : async (ids: number[]) => {
              const found = await read(
                rows(sql`SELECT m.id FROM ${n.messages} m JOIN ${n.sessions} s ON s.id = m.session_id
                  WHERE ${idIn(sql`m.id`, ids)} ${where}`),
              );
              return new Set(found.map((r) => Number(r.id)));
            };
      const ranked = await rankPostings(query, reader, end, path, { accept, window: cap });
      return { rows: await read(hitRows(n, ranked.ids.slice(offset, end))), capped: ranked.capped };
    },
    *catchUp() {
      try {
        return yield* index.catchUp();
      } catch (error) {
        const failure = DatabaseError.from(error);
        if (failure instanceof DatabaseError && failure.driverCode === UNDEFINED_TABLE)
          throw new MigrationError(
            'SEARCH_NEEDS_MIGRATION',
            `this store's search reads the block index of migration 0010_message_search_blocks, which its history does not record: migrate it (openStore without { migrate: false }, or \`hermes-sessiondb migrate\`)`,
            { cause: error },
          );
        throw error;
      }
    },
    vacuumDue: () => index.vacuumDue(),
    // The read only fetches text (snippets are computed in TypeScript): one read for the page.
    pageTextChunk: 100,
    // Heads are read by the server (or PGlite's thread), which reads only a row's first bytes.
    contextTextChunk: 100,
    pageText: (_path, _match, ids) => {
      // A big row sends only the head of its content: left() reads a prefix of the stored value (no full
      // detoast), where reading a 1 MB row whole costs milliseconds. The tool columns
      // follow the head as they follow the content in the indexed text, so that the text's first
      // SNIPPET_HEAD_CHARS characters are those SQLite's FTS5 table holds.
      const big = sql`octet_length(m.content) > ${WHOLE_TEXT_MAX_BYTES}`;
      return sql`SELECT m.id, NULL AS snippet,
          CASE WHEN ${big} THEN left(m.content, ${SNIPPET_HEAD_READ_CHARS}::int) ELSE m.content END AS content,
          CASE WHEN ${big} THEN NULL ELSE m.content_json END AS content_json, m.tool_name, m.tool_calls
        FROM ${n.messages} m WHERE m.id IN (${sql.join(
          ids.map((id) => sql`${id}::int8`),
          sql`, `,
        )})`;
    },
    // The text the index holds (searchable-text.ts), not message_search_text(): jsonb's text keeps non-ASCII.
    pageTextOf: (row) => searchableText(row),
    // Evaluated as the index sees the message (the library's tokenizer), so verification agrees with search.
    *matchesMessage(path, match, id) {
      const [row] = yield* rows(
        sql`SELECT m.content, m.content_json, m.tool_name, m.tool_calls FROM ${n.messages} m WHERE m.id = ${id}::int8`,
      );
      return row !== undefined && evaluateRow(match, searchableText(row), path).match;
    },
    like: (tokens, where, limit, offset) => {
      // Plain-column ILIKEs, so the planner can walk idx_messages_timestamp newest-first and stop after a
      // page (a function or translate() here makes it expect one row and scan everything: 78 ms vs 0.9 ms
      // at 100,000 messages). ILIKE also folds non-ASCII case, where SQLite's LIKE folds ASCII only.
      const clauses = tokens.map((token) => {
        const pattern = containsPattern(token);
        // Hermes' JSON escapes every non-ASCII character (Python's json.dumps), so its LIKE never finds such a
        // token in structured content or tool calls; jsonb's text holds the characters themselves.
        const json = /[^\x00-\x7f]/.test(token)
          ? sql``
          : sql` OR m.content_json::text ILIKE ${pattern} ESCAPE '\\' OR m.tool_calls::text ILIKE ${pattern} ESCAPE '\\'`;
        const like = sql`(m.content ILIKE ${pattern} ESCAPE '\\' OR m.tool_name ILIKE ${pattern} ESCAPE '\\'${json})`;
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
