/**
 * How MySQL/MariaDB spells the dialect slots. The data is stored as on SQLite (content with the "\x00json:"
 * marker, JSON as the text Hermes wrote, schema/mysql.ts), so the value slots follow SQLite's. Connections speak
 * ANSI SQL (db/mysql/open.ts), so the repositories' statements run as written; what MySQL spells differently is
 * here. Nothing here runs a statement: runner.ts does.
 */
import { type SQL, sql } from 'drizzle-orm';
import { decodeStoredContent, encodeStoredContent } from '../../codecs/content.js';
import { parseStoredJson } from '../../codecs/json.js';
import { pythonJsonDumps } from '../../codecs/python-json.js';
import { epochSecondsToDatetime, timestamptzToEpochSeconds } from '../../codecs/time.js';
import { ValidationError } from '../../errors.js';
import { MYSQL_ID_BYTES, MYSQL_KEY_BYTES, MYSQL_STATE_BYTES, MYSQL_TITLE_BYTES } from '../../schema/mysql.js';
import { activityInTable } from '../../sql/activity.js';
import { messageColumnList } from '../../sql/message-columns.js';
import { replayColumnList } from '../../sql/replay-columns.js';
import { bareTableNames } from '../../sql/tables.js';
import { type BulkLimits, STATEMENT_OVERHEAD_BYTES, YEAR_1000, YEAR_10000, rowBytes } from '../bulk-fit.js';
import type { BulkColumn, Spelling, ValueDecoders } from '../dialect.js';
import { type Op, exec, execText, first } from '../ops.js';
import { mysqlSearch } from './search.js';

/** A plain value typed as SQL: only ever interpolated into sql`…`, where it becomes a bound parameter. */
const bare = (value: string | number | null): SQL => value as unknown as SQL;

const num = (v: unknown): number => (typeof v === 'number' ? v : Number(v));
const toEpoch = (v: unknown): number => (typeof v === 'number' ? v : timestamptzToEpochSeconds(String(v)));

/** Parameters per bulk statement, and the bytes its rows may take when none of them is longer alone. */
const BULK_PARAMS = 30_000;
const BULK_BYTES = 4 << 20;
/** max_allowed_packet when the server does not say (MariaDB's and MySQL 5.7's default). */
const MYSQL_DEFAULT_PACKET = 16 << 20;

/** What MySQL's columns hold (schema/mysql.ts): DATETIME(6), BIGINT and INT, DOUBLE, byte-bounded VARBINARY keys. */
const MYSQL_LIMITS: BulkLimits = {
  time: { first: YEAR_1000, end: YEAR_10000, years: 'years 1000 to 9999' },
  integers: true,
  int32: new Set(['messages.token_count']),
  finiteReals: true,
  textBytes: new Map([
    ['sessions.id', MYSQL_ID_BYTES],
    ['sessions.parent_session_id', MYSQL_ID_BYTES],
    ['sessions.source', MYSQL_KEY_BYTES],
    ['sessions.title', MYSQL_TITLE_BYTES],
    ['sessions.handoff_state', MYSQL_STATE_BYTES],
    ['messages.session_id', MYSQL_ID_BYTES],
    ['state_meta.key', MYSQL_KEY_BYTES],
    ['telegram_dm_topic_mode.chat_id', MYSQL_KEY_BYTES],
    ['telegram_dm_topic_bindings.chat_id', MYSQL_KEY_BYTES],
    ['telegram_dm_topic_bindings.thread_id', MYSQL_KEY_BYTES],
    ['telegram_dm_topic_bindings.user_id', MYSQL_KEY_BYTES],
    ['telegram_dm_topic_bindings.session_id', MYSQL_ID_BYTES],
    ['telegram_dm_topic_bindings.managed_mode', MYSQL_STATE_BYTES],
  ]),
  statementBytes: MYSQL_DEFAULT_PACKET,
  nulOnlyInMessageText: false,
};

export const mysqlValueDecoders: ValueDecoders = {
  time: toEpoch,
  timeOrNull: (v) => (v === null || v === undefined ? null : toEpoch(v)),
  json: (v) => (typeof v === 'string' ? parseStoredJson(v) : v === null || v === undefined ? null : (v as never)),
  int: (v) => (v === null || v === undefined ? 0 : num(v)),
  intOrNull: (v) => (v === null || v === undefined ? null : num(v)),
  bool: (v) => (v === null || v === undefined ? null : Boolean(num(v))),
  content: (row) => decodeStoredContent((row.content as string | null) ?? null),
  freeText: (v) => (v === null || v === undefined ? null : String(v)),
  storedContent: (row) => (row.content === null || row.content === undefined ? null : String(row.content)),
  jsonText: (v) => (v === null || v === undefined ? null : String(v)),
};

/** Only ASCII letters fold, as in SQLite's LIKE (MySQL's LOWER() leaves binary strings alone and folds all letters of text). */
const UPPER = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ';
// The 26 REPLACEs are constant text, written once: as fragments with parameters, a long search's hundreds of
// folded columns took the event loop hundreds of milliseconds to compile.
const ASCII_LOWER_OPEN = sql.raw(`${'REPLACE('.repeat(UPPER.length)}CAST(`);
const ASCII_LOWER_CLOSE = sql.raw(` AS BINARY)${[...UPPER].map((c) => `, '${c}', '${c.toLowerCase()}')`).join('')}`);
function asciiLower(expr: SQL): SQL {
  return sql`${ASCII_LOWER_OPEN}${expr}${ASCII_LOWER_CLOSE}`;
}
const asciiLowerText = (text: string) => text.replace(/[A-Z]/g, (c) => c.toLowerCase());
/** Hermes' LIKE of an asciiLower()ed expression ('\\' in MySQL's string syntax is one backslash). */
const likeLowered = (lowered: SQL, pattern: string) =>
  sql`${lowered} LIKE CAST(${asciiLowerText(pattern)} AS BINARY) ESCAPE '\\\\'`;

/** The structured-content marker at the start of a content column ("\x00json:"). */
const isStructured = (a: string) => sql.raw(`LEFT(${a}.content, 6) = CONCAT(CHAR(0), 'json:')`);
const structuredBody = (a: string) => sql.raw(`SUBSTRING(${a}.content, 7)`);

export class MysqlSpelling implements Spelling {
  readonly name = 'mysql' as const;
  readonly descNullsLast = sql`DESC`;
  readonly tipsInListingPage = false;
  readonly t = bareTableNames();
  readonly decode = mysqlValueDecoders;
  readonly search = mysqlSearch(this.t, {
    asciiLower,
    likeLowered,
    contentText: (a) => sql`CASE WHEN ${isStructured(a)} THEN ${structuredBody(a)} ELSE ${sql.raw(a)}.content END`,
  });
  readonly forUpdate = sql` FOR UPDATE`;
  readonly databaseSize = sql`SELECT COALESCE(SUM(data_length + index_length), 0) AS bytes
    FROM information_schema.TABLES WHERE table_schema = DATABASE()`;

  text = (v: string | null | undefined) => bare(v ?? null);
  freeText = (v: string | null | undefined) => bare(v ?? null);
  int = (v: number | null | undefined) => bare(v ?? null);
  real = (v: number | null | undefined) => bare(v ?? null);
  bool = (v: boolean | null | undefined) => bare(v === null || v === undefined ? null : v ? 1 : 0);
  time = (v: number | null | undefined) => bare(v === null || v === undefined ? null : epochSecondsToDatetime(v));
  json = (v: unknown) => bare(v === null || v === undefined ? null : pythonJsonDumps(v));

  // InnoDB moves its counter past an explicit id as the row is inserted.
  readonly advanceMessageIds = function* (): Op<void> {};
  *reserveMessageIds(upTo: number): Op<void> {
    // Only an insert moves InnoDB's counter inside a transaction (ALTER TABLE … AUTO_INCREMENT would commit):
    // a placeholder row at `upTo`, removed at once; the counter stays past it. Checks are off for it alone.
    yield* exec(sql`SET @hsdb_fk = @@foreign_key_checks, foreign_key_checks = 0`);
    try {
      yield* exec(
        sql`INSERT INTO messages (id, session_id, role, timestamp) SELECT ${upTo}, '', '', '1970-01-01 00:00:00'
          FROM DUAL WHERE ${upTo} > 0 AND NOT EXISTS (SELECT 1 FROM messages WHERE id >= ${upTo})`,
      );
      yield* exec(sql`DELETE FROM messages WHERE id = ${upTo} AND session_id = ''`);
    } finally {
      // Also after a failed insert (another writer took the id): the pooled connection serves other writes
      // next, which must not skip the checks. Should this fail too, so does the ROLLBACK, and the transaction
      // destroys the connection.
      yield* exec(sql`SET foreign_key_checks = @hsdb_fk, @hsdb_fk = NULL`);
    }
  }

  /** The server's max_allowed_packet on this connection: no statement of an import may be longer. */
  *bulkLimits(): Op<BulkLimits> {
    const found = yield* first<{ n: unknown }>(sql`SELECT @@max_allowed_packet AS n`);
    return { ...MYSQL_LIMITS, statementBytes: Number(found?.n ?? MYSQL_DEFAULT_PACKET) };
  }

  /**
   * Multi-row INSERTs bounded in bytes as the server counts them (UTF-8, escapes included, db/bulk-fit.ts):
   * a row that would take a statement past BULK_BYTES (or past max_allowed_packet) starts the next one. A row
   * too long for any statement is refused before anything of this call is sent; an import has refused it
   * earlier still, before its first write (transfer/pipeline.ts).
   */
  *bulkInsert(
    table: string,
    columns: readonly BulkColumn[],
    rows: readonly (readonly unknown[])[],
    onConflict: string,
  ): Op<void> {
    const { statementBytes } = yield* this.bulkLimits();
    const limit = (statementBytes ?? MYSQL_DEFAULT_PACKET) - STATEMENT_OVERHEAD_BYTES;
    const sizes = rows.map((row) => rowBytes(columns, row));
    for (let i = 0; i < rows.length; i++) {
      if (sizes[i]! > limit) {
        throw new ValidationError(
          `${table} row`,
          `the row with ${columns[0]!.name} ${String(rows[i]![0])} takes ${sizes[i]} bytes in a statement, more than ` +
            `the server's max_allowed_packet (${statementBytes} bytes) allows; nothing was written`,
        );
      }
    }
    const head = `INSERT INTO ${table} (${columns.map((c) => `"${c.name}"`).join(', ')}) VALUES `;
    const tuple = `(${columns.map(() => '?').join(', ')})`;
    const tail = this.conflictTail(onConflict, columns[0]!.name);
    const perStatement = Math.max(1, Math.floor(BULK_PARAMS / columns.length));
    let params: unknown[] = [];
    let count = 0;
    let bytes = 0;
    const flush = function* (): Op<void> {
      if (count === 0) return;
      yield* execText(`${head}${Array(count).fill(tuple).join(', ')}${tail}`, params);
      params = [];
      count = 0;
      bytes = 0;
    };
    for (let r = 0; r < rows.length; r++) {
      // Checked before the row goes in: a statement never grows past the bound (one row alone may pass BULK_BYTES).
      if (count >= perStatement || (count > 0 && bytes + sizes[r]! > Math.min(limit, BULK_BYTES))) yield* flush();
      const row = rows[r]!;
      for (let c = 0; c < columns.length; c++) {
        const v = row[c] ?? null;
        const type = columns[c]!.type;
        if (v === null) params.push(null);
        else if (type === 'bool') params.push(v ? 1 : 0);
        else if (type === 'time') params.push(epochSecondsToDatetime(v as number));
        else params.push(v);
      }
      count++;
      bytes += sizes[r]!;
    }
    yield* flush();
  }

  /** SQLite's and Postgres' ON CONFLICT … DO NOTHING tail of an import statement, as MySQL spells it. */
  private conflictTail(onConflict: string, firstColumn: string): string {
    if (onConflict.trim() === '') return '';
    if (/^ON CONFLICT\b.*\bDO NOTHING$/i.test(onConflict.trim())) {
      // A no-op update of the row already there: unlike INSERT IGNORE, every other error still fails the insert.
      return ` ON DUPLICATE KEY UPDATE "${firstColumn}" = "${firstColumn}"`;
    }
    throw new TypeError(`unsupported conflict clause for MySQL: ${onConflict}`);
  }

  /**
   * The session-activity insert trigger is held off for these statements (migration 0006 reads
   * @hsdb_deferred_activity, a variable of this connection alone); buildDeferredChunk computes the values after.
   */
  *bulkInsertMessages(columns: readonly BulkColumn[], rows: readonly (readonly unknown[])[], onConflict: string) {
    yield* exec(sql`SET @hsdb_deferred_activity = 1`);
    try {
      yield* this.bulkInsert('messages', columns, rows, onConflict);
    } finally {
      // Also after a failed insert (the driver throws the error into this operation, which runs this first):
      // the pooled connection serves appends next. Should this statement fail too, so does the ROLLBACK, and
      // the transaction destroys the connection.
      yield* exec(sql`SET @hsdb_deferred_activity = NULL`);
    }
  }
  /**
   * After an import's inserts: the session activity of an id range (hsdb_session_activity_build recomputes each
   * touched session and its compression ancestors).
   */
  *buildDeferredChunk(after: number, last: number, limit: number): Op<number | null> {
    const end = Math.min(last, after + limit);
    yield* exec(sql`CALL hsdb_session_activity_build(${after}, ${end})`);
    return end;
  }
  readonly bulkContent = {
    columns: [{ name: 'content', type: 'free' }] as const,
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
  onConflict = (keys: readonly string[], update: readonly string[] = []) =>
    sql.raw(
      update.length === 0
        ? // A no-op update of the row already there: unlike INSERT IGNORE, every other error still fails the insert.
          `ON DUPLICATE KEY UPDATE ${keys[0]} = ${keys[0]}`
        : `ON DUPLICATE KEY UPDATE ${update.map((c) => `${c} = VALUES(${c})`).join(', ')}`,
    );
  columnExists = (table: string, column: string) =>
    sql`SELECT COLUMN_NAME AS name FROM information_schema.COLUMNS
        WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ${table} AND COLUMN_NAME = ${column}`;
  // In session_activity: a MySQL trigger cannot update the table that fired it (error 1442, migration 0006).
  readonly activity = activityInTable(this.columnExists('session_activity', 'chain_last_active'));
  walkSeed = (value: SQL) => sql`CAST(${value} AS CHAR(${sql.raw(String(MYSQL_ID_BYTES))}))`;
  likeAsciiCi = (expr: SQL, pattern: string) =>
    // A pattern without ASCII letters (CJK) matches the same bytes in any case: no folding to do on each row.
    /[A-Za-z]/.test(pattern)
      ? likeLowered(asciiLower(expr), pattern)
      : sql`CAST(${expr} AS BINARY) LIKE CAST(${pattern} AS BINARY) ESCAPE '\\\\'`;
  inSubquery = (expr: SQL, subquery: SQL) => sql`${expr} IN (${subquery})`;
  // Compared text is binary already (schema/mysql.ts): byte order, as SQLite's BINARY collation.
  binary = (expr: SQL) => expr;
  /** Structured content: the text of its `type: "text"` parts, joined by spaces (contentPreviewText). */
  previewText = (a: string) => {
    const body = structuredBody(a);
    return sql`CASE WHEN ${isStructured(a)} THEN
        CASE WHEN JSON_VALID(${body}) AND JSON_TYPE(${body}) = 'ARRAY' THEN
          COALESCE(NULLIF(TRIM((
            SELECT GROUP_CONCAT(p.txt ORDER BY p.ord SEPARATOR ' ') FROM JSON_TABLE(${body}, '$[*]' COLUMNS (
              ord FOR ORDINALITY, kind LONGTEXT PATH '$.type', txt LONGTEXT PATH '$.text')) p
            WHERE p.kind = 'text' AND JSON_TYPE(JSON_EXTRACT(${body}, CONCAT('$[', p.ord - 1, '].text'))) = 'STRING')), ''),
            '[multimodal content]')
        ELSE '' END
      ELSE ${sql.raw(a)}.content END`;
  };
  hasContent = (a: string) => sql.raw(`${a}.content IS NOT NULL`);
  contentLength = (a: string) =>
    sql`CASE WHEN ${sql.raw(a)}.content IS NULL THEN 0 WHEN ${isStructured(a)} THEN 1 ELSE CHAR_LENGTH(${sql.raw(a)}.content) END`;
  contentHead = (a: string, chars: number) =>
    sql`CASE WHEN ${isStructured(a)} THEN ${sql.raw(a)}.content ELSE LEFT(${sql.raw(a)}.content, ${chars}) END AS content`;
}
