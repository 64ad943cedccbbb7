/**
 * How Postgres (and PGlite) spells the dialect slots. Parameters carry explicit types where Postgres cannot infer
 * one; times go in as timestamptz text exact to the microsecond; structured content lives in content_json; our
 * tables are schema-qualified. Nothing here runs a statement: runner.ts does.
 */
import { type SQL, sql } from 'drizzle-orm';
import { STRUCTURED_PREFIX, decodeStoredContent, encodeStoredContent, isStructured } from '../../codecs/content.js';
import type { JsonValue } from '../../codecs/json.js';
import { epochSecondsToTimestamptz, timestamptzToEpochSeconds } from '../../codecs/time.js';
import { activityInSessions } from '../../sql/activity.js';
import { standardOnConflict } from '../../sql/conflict.js';
import { messageColumnList } from '../../sql/message-columns.js';
import { packedReplayColumnList } from '../../sql/replay-columns.js';
import { type QualifiedNames, qualifiedNames } from '../../sql/tables.js';
import { type BulkLimits, YEAR_1, YEAR_10000 } from '../bulk-fit.js';
import type { BulkColumn, BulkType, SearchStatements, Spelling, ValueDecoders } from '../dialect.js';
import { type Op, exec } from '../ops.js';
import { pgParam } from './append-statement.js';
import { decodePgJson, decodePgJsonText, decodePgText, encodePgJsonText, encodePgText } from './nul-escape.js';
import { pgSearch } from './search.js';

/** Postgres and PGlite: timestamptz through our codec, bigint counters, a 32-bit token_count, double precision. */
export const BULK_LIMITS: BulkLimits = {
  time: { first: YEAR_1, end: YEAR_10000, years: 'years 1 to 9999' },
  integers: true,
  int32: new Set(['messages.token_count']),
  finiteReals: true,
  textBytes: new Map(),
  statementBytes: null,
  nulOnlyInMessageText: true,
};

function toEpoch(v: unknown): number {
  if (typeof v === 'number') return v;
  if (typeof v === 'string') return timestamptzToEpochSeconds(v);
  if (v instanceof Date) return v.getTime() / 1000;
  throw new TypeError(`not a time value: ${String(v)}`);
}

const toNumber = (v: unknown): number => (typeof v === 'number' ? v : Number(v));

export const pgValueDecoders: ValueDecoders = {
  time: toEpoch,
  timeOrNull: (v) => (v === null || v === undefined ? null : toEpoch(v)),
  // The drivers parse jsonb; a jsonb string scalar arrives as a JS string and must stay one.
  json: (v) => (v === undefined ? null : decodePgJson(v as JsonValue | null)),
  freeText: (v) => (v === null || v === undefined ? null : decodePgText(String(v))),
  jsonText: (v) => (v === null || v === undefined ? null : decodePgJsonText(String(v))),
  // Structured content lives in content_json; plain text that starts with the marker is re-marked as Hermes needs.
  storedContent: (row) =>
    row.content_json !== null && row.content_json !== undefined
      ? STRUCTURED_PREFIX + decodePgJsonText(String(row.content_json))
      : typeof row.content === 'string'
        ? encodeStoredContent(decodePgText(row.content))
        : null,
  int: (v) => (v === null || v === undefined ? 0 : toNumber(v)),
  intOrNull: (v) => (v === null || v === undefined ? null : toNumber(v)),
  bool: (v) => (v === null || v === undefined ? null : Boolean(v)),
  content: (row) =>
    typeof row.content === 'string'
      ? decodePgText(row.content)
      : row.content_json === null || row.content_json === undefined
        ? null
        : (decodePgJson(row.content_json as JsonValue) as ReturnType<ValueDecoders['content']>),
};

/** Rows per bulk statement: they travel as one JSON parameter, so only its size bounds them. */
const BULK_ROWS = 5000;
const BULK_CAST: Record<BulkType, string> = {
  text: '',
  free: '',
  int: '::int8',
  real: '::float8',
  time: '::timestamptz',
  json: '::jsonb',
  bool: '::boolean',
};

/** JSON text as jsonb takes it: text that is not JSON is kept as a JSON string (JSON text read from a Hermes file may be damaged). */
function asJsonText(text: string): string {
  try {
    JSON.parse(text);
    return text;
  } catch {
    return JSON.stringify(text);
  }
}

const UPPER = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ';
const LOWER = 'abcdefghijklmnopqrstuvwxyz';

export class PgSpelling implements Spelling {
  readonly name = 'pg' as const;
  readonly descNullsLast = sql`DESC NULLS LAST`;
  readonly tipsInListingPage = true;
  readonly decode = pgValueDecoders;
  readonly search: SearchStatements;
  readonly advanceMessageIds: () => Op<void>;
  readonly reserveMessageIds: (upTo: number) => Op<void>;
  readonly forUpdate = sql` FOR UPDATE`;
  readonly databaseSize = sql`SELECT pg_database_size(current_database()) AS bytes`;

  /** `names`: our tables and functions qualified with the store's schema (default: the public layout). */
  constructor(readonly t: QualifiedNames = qualifiedNames()) {
    this.search = pgSearch(t);
    // The sequence is found through the qualified table name (a text argument, bound as a parameter).
    const sequence = sql`pg_get_serial_sequence(${t.qualifiedText('messages')}, 'id')`;
    // Never below an id already handed out: an append in flight may hold one above MAX(id).
    const handedOut = sql`COALESCE(pg_sequence_last_value(${sequence}::regclass), 0)`;
    this.advanceMessageIds = function* (): Op<void> {
      yield* exec(
        sql`SELECT setval(${sequence}, GREATEST(COALESCE(MAX(id), 1), ${handedOut}), MAX(id) IS NOT NULL OR ${handedOut} > 0) FROM ${t.messages}`,
      );
    };
    this.reserveMessageIds = function* (upTo: number): Op<void> {
      // Appends wait for this transaction: none takes an id between reading the sequence and moving it.
      yield* exec(sql`LOCK TABLE ${t.messages} IN SHARE ROW EXCLUSIVE MODE`);
      yield* exec(
        sql`SELECT setval(${sequence}, GREATEST(${upTo}::int8, ${handedOut}, 1), ${upTo}::int8 > 0 OR ${handedOut} > 0)`,
      );
    };
  }

  text = (v: string | null | undefined) => sql`${v ?? null}::text`;
  freeText = (v: string | null | undefined) => sql`${pgParam.freeText(v)}::text`;
  int = (v: number | null | undefined) => sql`${v ?? null}::int8`;
  real = (v: number | null | undefined) => sql`${v ?? null}::float8`;
  bool = (v: boolean | null | undefined) => sql`${v ?? null}::boolean`;
  time = (v: number | null | undefined) => sql`${pgParam.time(v)}::timestamptz`;
  json = (v: unknown) => sql`${pgParam.json(v)}::jsonb`;
  // Rows travel as one JSON array of arrays (one parameter, far from the 65,535 limit, one round trip) and
  // are unpacked by json_array_elements; times go as exact timestamptz text, JSON as its text.
  bulkInsert = (
    table: string,
    columns: readonly BulkColumn[],
    rows: readonly (readonly unknown[])[],
    onConflict: string,
  ): Op<void> => this.bulkInsertInto(this.t, table, columns, rows, onConflict);
  private *bulkInsertInto(
    t: QualifiedNames,
    table: string,
    columns: readonly BulkColumn[],
    rows: readonly (readonly unknown[])[],
    onConflict: string,
  ): Op<void> {
    const select = columns.map((c, i) => `(r->>${i})${BULK_CAST[c.type]}`).join(', ');
    const head = sql.raw(
      `INSERT INTO ${t.qualifiedText(table)} (${columns.map((c) => `"${c.name}"`).join(', ')}) SELECT ${select} FROM json_array_elements(`,
    );
    const tail = sql.raw(`::json) AS r ${onConflict}`);
    for (let i = 0; i < rows.length; i += BULK_ROWS) {
      const payload = rows.slice(i, i + BULK_ROWS).map((row) =>
        columns.map((c, k) => {
          const v = row[k] ?? null;
          if (v === null) return null;
          if (c.type === 'time') return epochSecondsToTimestamptz(v as number);
          if (c.type === 'json') return encodePgJsonText(asJsonText(v as string));
          if (c.type === 'free') return encodePgText(v as string);
          return v;
        }),
      );
      yield* exec(sql`${head}${JSON.stringify(payload)}${tail}`);
    }
  }
  // biome-ignore lint/correctness/useYield: the limits are the schema's, nothing to ask the database
  readonly bulkLimits = function* (): Op<BulkLimits> {
    return BULK_LIMITS;
  };
  // Postgres maintains its search structures per statement (generated columns, statement-level triggers).
  bulkInsertMessages = (columns: readonly BulkColumn[], rows: readonly (readonly unknown[])[], onConflict: string) =>
    this.bulkInsert('messages', columns, rows, onConflict);
  // biome-ignore lint/correctness/useYield: nothing is deferred on Postgres, so nothing to build
  readonly buildDeferredChunk = function* (): Op<number | null> {
    return null;
  };
  readonly bulkContent = {
    columns: [
      { name: 'content', type: 'free' },
      { name: 'content_json', type: 'json' },
    ] as const,
    values: (stored: string | null): unknown[] => {
      // Plain text, marker-looking text that is not JSON, and a marker with a JSON string all go to `content`.
      const decoded = decodeStoredContent(stored);
      if (decoded === null) return [null, null];
      return isStructured(decoded) ? [null, stored!.slice(STRUCTURED_PREFIX.length)] : [decoded, null];
    },
  };
  storedJson = (column: string) => sql.raw(`"${column}"::text AS "${column}"`);
  readonly storedContentColumns = sql.raw('content, content_json::text AS content_json');
  contentInsert = (content: Parameters<Spelling['contentInsert']>[0]) => {
    const [text, json] = pgParam.content(content);
    return { columns: sql`content, content_json`, values: sql`${text}::text, ${json}::jsonb` };
  };

  // content_json last, so that the columns the dialects share keep their positions (rows.ts messageRowFromValues).
  messageColumns = (a: string) => messageColumnList(a, ['content_json']);
  replayColumns = (a: string) => packedReplayColumnList(a, ['content_json']);
  readonly replayPacked = true;
  onConflict = standardOnConflict;
  columnExists = (table: string, column: string) =>
    sql`SELECT a.attname AS name FROM pg_catalog.pg_attribute a
        WHERE a.attrelid = ${this.t.qualifiedText(table)}::regclass AND a.attname = ${column} AND NOT a.attisdropped`;
  // A getter: `t` is set by the constructor, after the fields.
  get activity() {
    return activityInSessions(this.columnExists('sessions', 'chain_last_active'));
  }
  walkSeed = (value: SQL) => value;
  // Only ASCII letters fold, as in SQLite's LIKE (ILIKE would also fold Ü/ü and the like).
  likeAsciiCi = (expr: SQL, pattern: string) =>
    sql`translate(${expr}, ${UPPER}::text, ${LOWER}::text) LIKE translate(${pattern}::text, ${UPPER}::text, ${LOWER}::text) ESCAPE '\\'`;
  inSubquery = (expr: SQL, subquery: SQL) => sql`${expr} = ANY(ARRAY(${subquery}))`;
  binary = (expr: SQL) => sql`${expr} COLLATE "C"`;
  previewText = (a: string) => {
    const j = sql.raw(`${a}.content_json`);
    return sql`CASE WHEN ${j} IS NULL THEN ${sql.raw(a)}.content
      WHEN jsonb_typeof(${j}) = 'array' THEN COALESCE(NULLIF(btrim((
        SELECT string_agg(p.value ->> 'text', ' ') FROM jsonb_array_elements(${j}) p
        WHERE jsonb_typeof(p.value) = 'object' AND p.value ->> 'type' = 'text'
          AND jsonb_typeof(p.value -> 'text') = 'string')), ''), '[multimodal content]')
      ELSE '' END`;
  };
  hasContent = (a: string) => sql.raw(`(${a}.content IS NOT NULL OR ${a}.content_json IS NOT NULL)`);
  // Twice the characters: escaped NULs take two each (nul-escape.ts), and the caller cuts after decoding.
  contentHead = (a: string, chars: number) =>
    sql`left(${sql.raw(a)}.content, ${chars * 2}::int) AS content, ${sql.raw(a)}.content_json`;
  contentLength = (a: string) =>
    sql.raw(`CASE WHEN ${a}.content_json IS NOT NULL THEN 1 ELSE COALESCE(length(${a}.content), 0) END`);
}
