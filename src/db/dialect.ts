/**
 * What each engine supplies, in two parts. `Spelling`: how the engine writes SQL (parameters, decoders, table
 * names, content expressions, conflict tails, walks, the search and bulk statements) as fragments and
 * operations (`Op`s) that run nothing themselves. `Runner`: how operations run (reads, write transactions and
 * their order, the maintenance worker, group commit, appendMessage's hot path, settle and close).
 * Repositories never branch on the engine by name.
 */
import type { SQL } from 'drizzle-orm';
import type { MessageContent, MessageContentInput } from '../codecs/content.js';
import type { JsonInput, JsonValue } from '../codecs/json.js';
import type { BulkLimits } from './bulk-fit.js';
import type { Op } from './ops.js';
import type { DialectName } from './migrations.js';
import type { QueryNode } from '../search/query.js';
import type { KeptActivity } from '../sql/activity.js';
import type { TableNames } from '../sql/tables.js';

export type SearchOrder = 'relevance' | 'newest' | 'oldest';

/** `free`: free text (message fields, system prompts), which may hold NUL; `text`: identifiers and labels. */
export type BulkType = 'text' | 'free' | 'int' | 'real' | 'time' | 'json' | 'bool';
export interface BulkColumn {
  readonly name: string;
  readonly type: BulkType;
}

/** Which index a parsed query is matched against: unicode61 words, or trigram substrings. */
export type MatchPath = 'words' | 'substrings';

/** Runs one operation inside a snapshot a caller holds (Runner.snapshot). */
export type SnapshotRead = <T>(op: Op<T>) => Promise<T>;

/**
 * The search statements of a dialect. A search runs in phases so that only the returned page pays for
 * snippets and context: `page` (ordered ids and hit columns, no snippet), then `pageText` for the page's
 * rows. `where` is null (no filter) or a fragment of extra conditions, each starting with AND.
 */
export interface SearchStatements {
  /**
   * The ordered page: rows with id, session_id, role, timestamp, tool_name, source, model, session_started.
   * Relevance is Hermes' order (bm25 ascending, ties by id) over every match, unless the query itself
   * (filters included) matches more than `cap` messages: then over its newest `cap` matches, and `capped`
   * is true. Newest/oldest order by timestamp, then bm25, then id ascending, as Hermes'
   * `ORDER BY m.timestamp DESC, rank` comes out of SQLite's stable sorter; they see every match.
   */
  page(
    path: MatchPath,
    match: QueryNode,
    where: SQL | null,
    order: SearchOrder,
    limit: number,
    offset: number,
    cap: number,
  ): Op<{ rows: Array<Record<string, unknown>>; capped: boolean }>;
  /**
   * For the page's ids: rows `{ id, snippet, search_text }`. `snippet` is the engine's own snippet where it
   * has one and the row is small enough for it to be cheap, else NULL and `search_text` holds the indexed
   * text to compute one from: whole, or for a huge row its first SNIPPET_HEAD_READ_CHARS characters (one
   * more than a snippet looks at, so that the reader sees whether the row goes on).
   */
  pageText(path: MatchPath, match: QueryNode, ids: number[]): SQL;
  /**
   * The indexed text of a pageText row, for an engine whose pageText returns the searchable columns instead of
   * `search_text` (Postgres: tool-call JSON as Python writes it, non-ASCII escaped, which jsonb's text is not).
   */
  pageTextOf?(row: Record<string, unknown>): string | null;
  /**
   * How many rows one pageText read takes: few where the engine's own snippet runs inside the read (it is
   * synchronous on SQLite), a whole page where the read only fetches text (snippets are then computed in
   * TypeScript, a few rows at a time).
   */
  readonly pageTextChunk: number;
  /**
   * How many messages one read of context heads takes: few where a head's read loads the whole row on the
   * event loop (SQLite), more where it runs elsewhere and reads only the head.
   */
  readonly contextTextChunk: number;
  /**
   * Word and substring pages ranked by the library over its block index (Postgres, PGlite): used instead of
   * `page` where present. `query` is the FTS5 query text the plan parsed into `match`; every read goes
   * through `read`, inside one snapshot (Runner.snapshot). `cap` and `capped` as for `page`.
   */
  blocksPage?(
    read: SnapshotRead,
    path: MatchPath,
    query: string,
    where: SQL | null,
    order: SearchOrder,
    limit: number,
    offset: number,
    cap: number,
  ): Promise<{ rows: Array<Record<string, unknown>>; capped: boolean }>;
  /** Set on a dialect whose message search is not built yet: why every statement below refuses. */
  readonly unavailable?: string;
  /** Hermes' short-CJK path: every token OR-ed as a case-insensitive substring, newest first, snippet in SQL. */
  like(tokens: string[], where: SQL | null, limit: number, offset: number): SQL;
  /** Whether message `id` matches the query (verification: sees every match, whatever the page). */
  matchesMessage(path: MatchPath, match: QueryNode, id: number): Op<boolean>;
  /**
   * Bring what word search derives from messages up to date before a search, a piece per call (MySQL: the
   * token counts of messages written since the last search); true while more is left. Absent where the
   * database keeps it up to date itself.
   */
  catchUp?(): Op<boolean>;
  /**
   * After catching up: the tables whose dead rows the catch-ups left are worth a VACUUM now, or null. The
   * queue tables are rewritten at every merge; without autovacuum (PGlite has none, a server may have it off)
   * each search would walk their dead rows.
   */
  vacuumDue?(): SQL[] | null;
}

export interface ValueDecoders {
  /** Epoch seconds from a time column or expression (REAL on SQLite, timestamptz text on Postgres). */
  time(value: unknown): number;
  timeOrNull(value: unknown): number | null;
  /** Parsed JSON from a JSON column (TEXT on SQLite, jsonb on Postgres). */
  json(value: unknown): JsonValue | null;
  /** A free-text column as written (Postgres stores NUL escaped: db/pg/nul-escape.ts); null stays null. */
  freeText(value: unknown): string | null;
  /** JSON text read with `storedJson` as Hermes stores it (NUL spelled \u0000); null stays null. */
  jsonText(value: unknown): string | null;
  /** A number from an integer column (int8 arrives as a string from postgres.js). */
  int(value: unknown): number;
  intOrNull(value: unknown): number | null;
  bool(value: unknown): boolean | null;
  /** The content of a row read with `storedContentColumns`, as Hermes stores it (text, or "\x00json:" + JSON). */
  storedContent(row: Record<string, unknown>): string | null;
  /** The message content of a raw `messages` row (its content columns). */
  content(row: Record<string, unknown>): MessageContent | null;
}

export interface WriteOptions {
  /**
   * Writes with the same lane (a session id) commit in the order they were requested, even when none of
   * them is awaited. SQLite commits every write in request order anyway; Postgres runs writes of
   * different lanes side by side on the pool.
   */
  readonly lane?: string;
  /**
   * Run after every write requested before it has settled, and make every write requested after it wait
   * until it has (a prune batch: a write to a session it deletes is never undone by it). SQLite commits
   * every write in request order anyway.
   */
  readonly barrier?: boolean;
}

/** A validated message for appendMessage: JS values, encoded by the dialect; `toolCallCount` bumps the counter. */
export interface AppendedMessage {
  readonly sessionId: string;
  readonly role: string;
  readonly content: MessageContentInput | null | undefined;
  readonly timestamp: number;
  readonly toolCallCount: number;
  readonly toolName?: string | null;
  readonly toolCalls?: JsonInput | null;
  readonly toolCallId?: string | null;
  readonly tokenCount?: number | null;
  readonly finishReason?: string | null;
  readonly reasoning?: string | null;
  readonly reasoningContent?: string | null;
  readonly reasoningDetails?: JsonInput | null;
  readonly codexReasoningItems?: JsonInput | null;
  readonly codexMessageItems?: JsonInput | null;
}

/** How an engine spells SQL: fragments and operations only, nothing that runs them (see `Runner`). */
export interface Spelling {
  readonly name: DialectName;
  /** Our tables as runtime SQL names them: schema-qualified on Postgres (never through search_path), bare on SQLite. */
  readonly t: TableNames;

  /** Typed parameters (Postgres cannot infer a type for a bare NULL in CASE/COALESCE). */
  text(value: string | null | undefined): SQL;
  /** Free text (message fields, system prompts): any string, NUL included. */
  freeText(value: string | null | undefined): SQL;
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
   * `table` is one of our table names, unqualified: the dialect qualifies it.
   */
  bulkInsert(
    table: string,
    columns: readonly BulkColumn[],
    rows: readonly (readonly unknown[])[],
    onConflict: string,
  ): Op<void>;
  /**
   * bulkInsert into messages for an import or copy page, with the structures derived from messages that are
   * cheaper built once at the end held off (SQLite: the FTS5 and session-activity insert triggers, inside this
   * transaction only; db/sqlite/deferred-triggers.ts). The rows lack them until `buildDeferredChunk` covers their ids.
   */
  bulkInsertMessages(
    columns: readonly BulkColumn[],
    rows: readonly (readonly unknown[])[],
    onConflict: string,
  ): Op<void>;
  /**
   * Build what bulkInsertMessages held off for the next at most `limit` messages with `after < id <= last`
   * that lack it, in the caller's transaction: the last id covered, or null when none is left in the range.
   */
  buildDeferredChunk(after: number, last: number, limit: number): Op<number | null>;
  /**
   * What this database's columns hold (db/bulk-fit.ts): an import or copy checks every value against it before
   * its first write. MySQL reads the server's max_allowed_packet.
   */
  bulkLimits(): Op<BulkLimits>;
  /** The message content columns for bulkInsert, and their values for a stored (text or "\x00json:") content. */
  readonly bulkContent: { readonly columns: readonly BulkColumn[]; values(stored: string | null): unknown[] };
  /** The content column names and values for an INSERT into messages. */
  contentInsert(content: MessageContentInput | null | undefined): { columns: SQL; values: SQL };

  /**
   * The messages columns every message read selects (never the tsvector): id, session_id, role, content,
   * tool_call_id, tool_calls, tool_name, timestamp, token_count, finish_reason, reasoning, reasoning_content,
   * reasoning_details, codex_reasoning_items, codex_message_items in this order, then the dialect's own
   * (Postgres: content_json), so that a row read as values decodes by position (rows.ts messageRowFromValues).
   */
  messageColumns(alias: string): SQL;
  /** The columns a conversation replay reads (sql/replay-columns.ts), then the dialect's own (Postgres: content_json). */
  replayColumns(alias: string): SQL;
  /** Whether replayColumns packs the columns after role and content into one JSON array (rows.ts decodePackedReplayValues). */
  readonly replayPacked: boolean;
  /**
   * The tail of an INSERT for a row that is already there: on a conflict on the unique key `keys` (on any
   * unique key with `anyKey`), the columns in `update` take the new row's values; without `update` the old row
   * stays as it is. MySQL reacts to a conflict on any unique key, so a statement's other unique keys must be
   * checked before it where that matters.
   */
  onConflict(keys: readonly string[], update?: readonly string[], anyKey?: boolean): SQL;
  /**
   * Where the database keeps each session's last_message_at and chain_last_active right itself (the triggers of
   * the session-activity migrations: sessions' own columns, or MySQL's session_activity). Where they are missing
   * (a Hermes file opened as it is) listings compute activity as Hermes does.
   */
  readonly activity: KeptActivity;
  /** A query answering one row when our table `table` has the column `column` (a Hermes file may lack ours), none otherwise. */
  columnExists(table: string, column: string): SQL;
  /**
   * A text value as the first row of a recursive walk. MySQL sizes a recursive CTE's columns by that row alone,
   * so a literal id would cut every longer id met later ("Data too long"); the others take it as it is.
   */
  walkSeed(value: SQL): SQL;
  /** Hermes' LIKE: ASCII-only case-insensitive, `\` as the escape character. */
  likeAsciiCi(expr: SQL, pattern: string): SQL;
  /**
   * A condition: `expr` is among the values of the one-column `subquery` (which may repeat them). Postgres
   * takes them as one array (`= ANY(ARRAY(…))`), so a set the planner cannot size (a recursive walk) still
   * meets the index on `expr`'s column instead of a hash join over a sequential scan.
   */
  inSubquery(expr: SQL, subquery: SQL): SQL;
  /** Byte-order comparison for text tie-breaks (SQLite's BINARY collation). */
  binary(expr: SQL): SQL;
  /** Non-NULL content (of a message row alias) rendered as preview text: plain text, or the text parts of structured content. */
  previewText(alias: string): SQL;
  /** A condition: the message row alias has content (plain or structured). */
  hasContent(alias: string): SQL;
  /** Number of characters of content (0 for NULL); structured content counts as non-empty. */
  contentLength(alias: string): SQL;
  /**
   * The content columns of a message row as the decoder expects them, but plain text cut to at least its
   * first `chars` characters (structured content whole; the caller cuts the decoded text): previews of huge
   * messages never read the whole row.
   */
  contentHead(alias: string, chars: number): SQL;

  readonly decode: ValueDecoders;
  readonly search: SearchStatements;

  /** After rows were inserted with explicit ids: make the next generated message id larger than them all. */
  readonly advanceMessageIds: () => Op<void>;
  /** Make every message id generated from now on larger than `upTo` (never moves the sequence back). */
  reserveMessageIds(upTo: number): Op<void>;
  /** A query returning one row with `bytes`: the size of the database on disk. */
  readonly databaseSize: SQL;
  /**
   * The tail of a SELECT that locks the rows it reads until the write commits (Postgres FOR UPDATE; empty
   * on SQLite, where a write transaction holds the whole database).
   */
  readonly forUpdate: SQL;
  /** Descending order with NULLs last, as the listing indexes hold them (Postgres: DESC NULLS LAST). */
  readonly descNullsLast: SQL;
  /**
   * Whether list_sessions_rich projects the compression tips in the page's own statement (one round trip;
   * Postgres), rather than a second statement for the compression roots only (cheaper on SQLite).
   */
  readonly tipsInListingPage: boolean;
}

/** How an engine runs operations: transactions, their order, threads; what it holds open until close(). */
export interface Runner {
  /** Run a read-only operation (a consistent snapshot where the backend offers one cheaply). */
  read<T>(op: () => Op<T>): Promise<T>;
  /**
   * A read-only operation whose cost the caller's input decides (a search), kept off the event loop where
   * the backend can (SQLite file: a worker thread with its own connection). Absent: read().
   */
  readOffLoop?<T>(op: () => Op<T>): Promise<T>;
  /**
   * Run `body`, whose reads (each an operation, run through `read`) all see one snapshot of the database:
   * Postgres and PGlite, a read-only repeatable-read transaction. Absent where no dialect statement needs it.
   */
  snapshot?<T>(body: (read: SnapshotRead) => Promise<T>): Promise<T>;
  /** Run a write operation in one transaction; SQLite retries it while another writer holds the lock. */
  write<T>(op: () => Op<T>, options?: WriteOptions): Promise<T>;
  /**
   * appendMessage's hot path: bump the session's counters and insert the row in one transaction, as
   * sql/messages.ts' appendMessageOp does; resolves to the new id, rejects with SessionNotFoundError when the
   * session does not exist. Appends to one session commit in the order they were requested.
   */
  appendMessage(message: AppendedMessage): Promise<number>;
  /** Refuse new operations (StoreClosedError) and wait until every one already started has settled (called before closing). */
  settle(): Promise<void>;
  /**
   * A long write in one transaction (deleting a big session, a prune batch, a bulk import page), kept off
   * the event loop where the backend can (SQLite: a worker thread with its own connection). Postgres: write().
   */
  maintain<T>(op: () => Op<T>, options?: WriteOptions): Promise<T>;
  /** Release what the runner holds beyond the backend's connection (SQLite: the maintenance worker); after settle(). */
  close(): Promise<void>;
  /**
   * Fresh planner statistics for every table of the store, after a bulk load (import, copy, a migration's
   * backfill) changed them wholesale: Postgres and PGlite ANALYZE, MySQL ANALYZE TABLE; nothing on SQLite.
   */
  analyze(): Promise<void>;
  /** Reclaim space (SQLite: checkpoint + VACUUM; Postgres: VACUUM ANALYZE). */
  vacuum(): Promise<void>;
  /** VACUUM (ANALYZE) these tables only, outside any transaction (where SearchStatements.vacuumDue exists). */
  vacuumTables?(tables: readonly SQL[]): Promise<void>;
}

/** An engine's two parts, as a store holds them: the runner runs what the spelling writes. */
export interface Dialect {
  readonly spelling: Spelling;
  readonly runner: Runner;
}
