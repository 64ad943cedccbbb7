/**
 * The dialect slots repositories use: how values become SQL parameters, the few expressions that differ
 * between SQLite and Postgres, how raw rows decode, and how operations run (read vs write transaction).
 * Implemented in sqlite/dialect.ts and pg/dialect.ts; repositories never branch on the dialect by name.
 */
import type { SQL } from 'drizzle-orm';
import type { MessageContent, MessageContentInput } from '../codecs/content.js';
import type { JsonInput, JsonValue } from '../codecs/json.js';
import type { Op } from './ops.js';
import type { QueryNode } from '../search/query.js';

export type SearchOrder = 'relevance' | 'newest' | 'oldest';

export type BulkType = 'text' | 'int' | 'real' | 'time' | 'json' | 'bool';
export interface BulkColumn {
  readonly name: string;
  readonly type: BulkType;
}

export interface RankWindow {
  size: number;
  match: QueryNode;
}

/**
 * The search statements of a dialect. Each returns rows with id, session_id, role, timestamp, tool_name,
 * source, model, session_started, and either `snippet` (computed in SQL) or `search_text` (snippet to be
 * computed by the caller). `where` is a fragment of extra conditions, each starting with AND.
 */
export interface SearchStatements {
  /**
   * `window` caps the cost of a broad query: relevance is ranked among the matches no older than the
   * `size`-th newest message matching `window.match` (a relaxed form of the query whose matches are a
   * superset, cheap to walk newest-first). Newest/oldest orders see every match.
   */
  words(match: QueryNode, where: SQL, order: SearchOrder, limit: number, offset: number, window: RankWindow): SQL;
  substrings(match: QueryNode, where: SQL, order: SearchOrder, limit: number, offset: number, window: RankWindow): SQL;
  /** Hermes' short-CJK path: every token OR-ed as a case-insensitive substring, newest first. */
  like(tokens: string[], where: SQL, limit: number, offset: number): SQL;
  snippetsInSql: boolean;
}

export interface ValueDecoders {
  /** Epoch seconds from a time column or expression (REAL on SQLite, timestamptz text on Postgres). */
  time(value: unknown): number;
  timeOrNull(value: unknown): number | null;
  /** Parsed JSON from a JSON column (TEXT on SQLite, jsonb on Postgres). */
  json(value: unknown): JsonValue | null;
  /** A number from an integer column (int8 arrives as a string from postgres.js). */
  int(value: unknown): number;
  intOrNull(value: unknown): number | null;
  bool(value: unknown): boolean | null;
  /** The message content of a raw `messages` row (its content columns). */
  content(row: Record<string, unknown>): MessageContent | null;
}

export interface Dialect {
  readonly name: 'sqlite' | 'pg';

  /** Typed parameters (Postgres cannot infer a type for a bare NULL in CASE/COALESCE). */
  text(value: string | null | undefined): SQL;
  int(value: number | null | undefined): SQL;
  real(value: number | null | undefined): SQL;
  bool(value: boolean | null | undefined): SQL;
  time(value: number | null | undefined): SQL;
  /** A JSON column value; null/undefined store NULL. */
  json(value: JsonInput | null | undefined): SQL;
  /** A select-list item: the JSON column as the JSON text Hermes would store, named after the column (Postgres: jsonb::text). */
  storedJson(column: string): SQL;
  /** Message content columns for a bulk read: `content` (SQLite), plus `content_json` as text (Postgres). */
  readonly storedContentColumns: SQL;
  /**
   * Insert many rows in few statements (imports and copies). Values come in column order as JS values:
   * text a string, int/real a number, time epoch seconds, json JSON text (text that is not JSON is kept
   * as a JSON string on Postgres), bool a boolean; null for NULL. `onConflict` is the statement's tail.
   */
  bulkInsert(table: string, columns: readonly BulkColumn[], rows: readonly (readonly unknown[])[], onConflict: string): Op<void>;
  /** The message content columns for bulkInsert, and their values for a stored (text or "\x00json:") content. */
  readonly bulkContent: { readonly columns: readonly BulkColumn[]; values(stored: string | null): unknown[] };
  /** The content column names and values for an INSERT into messages. */
  contentInsert(content: MessageContentInput | null | undefined): { columns: SQL; values: SQL };

  /** The messages columns every message read selects (never the tsvector). */
  messageColumns(alias: string): SQL;
  /** Hermes' LIKE: ASCII-only case-insensitive, `\` as the escape character. */
  likeAsciiCi(expr: SQL, pattern: string): SQL;
  /** Byte-order comparison for text tie-breaks (SQLite's BINARY collation). */
  binary(expr: SQL): SQL;
  /** Non-NULL content (of a message row alias) rendered as preview text: plain text, or the text parts of structured content. */
  previewText(alias: string): SQL;
  /** A condition: the message row alias has content (plain or structured). */
  hasContent(alias: string): SQL;
  /** Number of characters of content (0 for NULL); structured content counts as non-empty. */
  contentLength(alias: string): SQL;

  readonly decode: ValueDecoders;
  readonly search: SearchStatements;

  /** Run a read-only operation (a consistent snapshot where the backend offers one cheaply). */
  read<T>(op: () => Op<T>): Promise<T>;
  /** Run a write operation in one transaction; SQLite retries it while another writer holds the lock. */
  write<T>(op: () => Op<T>): Promise<T>;
  /** Wait until every requested write has committed or failed (called before closing). */
  settle(): Promise<void>;
  /** After rows were inserted with explicit ids: make the next generated message id larger than them all. */
  readonly advanceMessageIds: () => Op<void>;
  /** A query returning one row with `bytes`: the size of the database on disk. */
  readonly databaseSize: SQL;
  /** Reclaim space (SQLite: checkpoint + VACUUM; Postgres: VACUUM ANALYZE). */
  vacuum(): Promise<void>;
}
