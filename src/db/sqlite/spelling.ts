/**
 * How SQLite spells the dialect slots: values bound as plain parameters (JSON as the text Hermes writes),
 * content with the "\x00json:" marker (content-expressions.ts), FTS5 search statements (search.ts), bulk
 * INSERTs with positional text. Nothing here runs a statement: runner.ts does.
 */
import { type SQL, sql } from 'drizzle-orm';
import { decodeStoredContent, encodeStoredContent } from '../../codecs/content.js';
import { parseStoredJson } from '../../codecs/json.js';
import { pythonJsonDumps } from '../../codecs/python-json.js';
import { activityInSessions } from '../../sql/activity.js';
import { standardOnConflict } from '../../sql/conflict.js';
import { messageColumnList } from '../../sql/message-columns.js';
import { replayColumnList } from '../../sql/replay-columns.js';
import { bareTableNames } from '../../sql/tables.js';
import type { BulkLimits } from '../bulk-fit.js';
import type { BulkColumn, Spelling, ValueDecoders } from '../dialect.js';
import { type Op, exec, execText } from '../ops.js';
import { sqliteIsStructured, sqliteStructuredBody } from './content-expressions.js';
import { buildDeferredChunk, withDeferredTriggers } from './deferred-triggers.js';
import { sqliteSearch } from './search.js';

/** SQLite: any number but NaN (it binds as NULL), text of any length. */
export const BULK_LIMITS: BulkLimits = {
  time: null,
  integers: false,
  int32: new Set(),
  finiteReals: false,
  textBytes: new Map(),
  statementBytes: null,
  nulOnlyInMessageText: false,
};

/** A plain value typed as SQL: only ever interpolated into sql`…`, where it becomes a bound parameter. */
const bare = (value: string | number | null): SQL => value as unknown as SQL;

/** Parameters per bulk statement: under SQLite's 32,766. */
const BULK_PARAMS = 32_000;

const num = (v: unknown): number => (typeof v === 'bigint' ? Number(v) : (v as number));

export const sqliteValueDecoders: ValueDecoders = {
  time: (v) => num(v),
  timeOrNull: (v) => (v === null || v === undefined ? null : num(v)),
  json: (v) => (typeof v === 'string' ? parseStoredJson(v) : v === null || v === undefined ? null : (v as never)),
  int: (v) => (v === null || v === undefined ? 0 : num(v)),
  intOrNull: (v) => (v === null || v === undefined ? null : num(v)),
  bool: (v) => (v === null || v === undefined ? null : Boolean(v)),
  content: (row) => decodeStoredContent((row.content as string | null) ?? null),
  freeText: (v) => (v === null || v === undefined ? null : String(v)),
  storedContent: (row) => (row.content === null || row.content === undefined ? null : String(row.content)),
  jsonText: (v) => (v === null || v === undefined ? null : String(v)),
};

export class SqliteSpelling implements Spelling {
  readonly name = 'sqlite' as const;
  readonly descNullsLast = sql`DESC`;
  readonly tipsInListingPage = false;
  readonly t = bareTableNames();
  readonly decode = sqliteValueDecoders;
  readonly search = sqliteSearch;
  // AUTOINCREMENT already records the largest id inserted, explicit ones included.
  // eslint-disable-next-line require-yield
  readonly advanceMessageIds = function* (): Op<void> {};
  // AUTOINCREMENT hands out max(sqlite_sequence.seq, MAX(id)) + 1.
  *reserveMessageIds(upTo: number): Op<void> {
    yield* exec(sql`UPDATE sqlite_sequence SET seq = MAX(seq, ${upTo}) WHERE name = 'messages'`);
    yield* exec(sql`INSERT INTO sqlite_sequence (name, seq) SELECT 'messages', ${upTo}
      WHERE NOT EXISTS (SELECT 1 FROM sqlite_sequence WHERE name = 'messages')`);
  }
  readonly forUpdate = sql``;
  readonly databaseSize = sql`SELECT page_count * page_size AS bytes FROM pragma_page_count(), pragma_page_size()`;

  // Values go into statements as bare parameters: inside sql`…` Drizzle and compile.ts bind a plain value
  // as a parameter, and not wrapping each one in its own SQL object is a fifth of a hot write's CPU.
  text = (v: string | null | undefined) => bare(v ?? null);
  freeText = (v: string | null | undefined) => bare(v ?? null);
  int = (v: number | null | undefined) => bare(v ?? null);
  real = (v: number | null | undefined) => bare(v ?? null);
  bool = (v: boolean | null | undefined) => bare(v === null || v === undefined ? null : v ? 1 : 0);
  time = (v: number | null | undefined) => bare(v ?? null);
  json = (v: unknown) => bare(v === null || v === undefined ? null : pythonJsonDumps(v));
  private readonly bulkTexts = new Map<string, string>();
  // Values go in as stored (JSON text byte for byte, booleans as 0/1); one cached statement text per shape.
  *bulkInsert(
    table: string,
    columns: readonly BulkColumn[],
    rows: readonly (readonly unknown[])[],
    onConflict: string,
  ): Op<void> {
    const perStatement = Math.max(1, Math.floor(BULK_PARAMS / columns.length));
    const bools = columns.map((c) => c.type === 'bool');
    for (let i = 0; i < rows.length; i += perStatement) {
      const chunk = rows.slice(i, i + perStatement);
      const key = `${table}|${columns.map((c) => c.name).join(',')}|${chunk.length}|${onConflict}`;
      let text = this.bulkTexts.get(key);
      if (text === undefined) {
        const tuple = `(${columns.map(() => '?').join(', ')})`;
        text = `INSERT INTO "${table}" (${columns.map((c) => `"${c.name}"`).join(', ')}) VALUES ${Array(chunk.length).fill(tuple).join(', ')} ${onConflict}`;
        this.bulkTexts.set(key, text);
      }
      const params: unknown[] = [];
      for (const row of chunk) {
        for (let c = 0; c < columns.length; c++) {
          const v = row[c] ?? null;
          params.push(bools[c] && v !== null ? (v ? 1 : 0) : v);
        }
      }
      yield* execText(text, params);
    }
  }
  // biome-ignore lint/correctness/useYield: the limits are the schema's, nothing to ask the database
  readonly bulkLimits = function* (): Op<BulkLimits> {
    return BULK_LIMITS;
  };
  bulkInsertMessages = (columns: readonly BulkColumn[], rows: readonly (readonly unknown[])[], onConflict: string) =>
    withDeferredTriggers(this.bulkInsert('messages', columns, rows, onConflict));
  readonly buildDeferredChunk = buildDeferredChunk;
  readonly bulkContent = {
    columns: [{ name: 'content', type: 'text' }] as const,
    values: (stored: string | null) => [stored],
  };
  storedJson = (column: string) => sql.raw(`"${column}"`);
  readonly storedContentColumns = sql.raw('content');
  contentInsert = (content: Parameters<Spelling['contentInsert']>[0]) => ({
    columns: sql`content`,
    values: sql`${encodeStoredContent(content)}`,
  });

  messageColumns = (a: string) => messageColumnList(a);
  replayColumns = (a: string) => replayColumnList(a);
  readonly replayPacked = false;
  onConflict = standardOnConflict;
  columnExists = (table: string, column: string) =>
    sql`SELECT name FROM pragma_table_info(${table}) WHERE name = ${column}`;
  readonly activity = activityInSessions(this.columnExists('sessions', 'chain_last_active'));
  walkSeed = (value: SQL) => value;
  likeAsciiCi = (expr: SQL, pattern: string) => sql`${expr} LIKE ${pattern} ESCAPE '\\'`;
  inSubquery = (expr: SQL, subquery: SQL) => sql`${expr} IN (${subquery})`;
  binary = (expr: SQL) => expr;
  /** Structured content: the text of its `type: "text"` parts, as contentPreviewText computes it in JS. */
  previewText = (a: string) => {
    const body = sqliteStructuredBody(a);
    return sql`CASE WHEN ${sqliteIsStructured(a)} THEN
        CASE WHEN json_valid(${body}) AND json_type(${body}) = 'array' THEN
          COALESCE(NULLIF(trim((
            SELECT group_concat(json_extract(p.value, '$.text'), ' ') FROM json_each(${body}) p
            WHERE p.type = 'object' AND json_extract(p.value, '$.type') = 'text'
              AND json_type(p.value, '$.text') = 'text')), ''), '[multimodal content]')
        ELSE '' END
      ELSE ${sql.raw(a)}.content END`;
  };
  hasContent = (a: string) => sql.raw(`${a}.content IS NOT NULL`);
  contentLength = (a: string) =>
    sql`CASE WHEN ${sql.raw(a)}.content IS NULL THEN 0 WHEN ${sqliteIsStructured(a)} THEN 1 ELSE length(${sql.raw(a)}.content) END`;
  // Cut as bytes (4 per character at most): substr() on text would stop at a NUL, which Hermes' Python slice keeps.
  contentHead = (a: string, chars: number) =>
    sql`CASE WHEN ${sqliteIsStructured(a)} THEN ${sql.raw(a)}.content
      ELSE CAST(substr(CAST(${sql.raw(a)}.content AS BLOB), 1, ${chars * 4}) AS TEXT) END AS content`;
}
