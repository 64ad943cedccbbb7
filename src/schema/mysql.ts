/**
 * MySQL/MariaDB tables: the same Hermes v11 data, typed so that MySQL compares it as SQLite does.
 *
 * - Text that is compared, sorted or unique (ids, titles, sources, roles, keys) is binary (VARBINARY /
 *   LONGBLOB holding UTF-8): exact and case-sensitive, trailing spaces significant, sorted in byte order like
 *   SQLite's BINARY collation. Every text collation of MariaDB 10.11 that both servers share pads with spaces
 *   ('a' = 'a '), and the NO PAD ones differ between MySQL (utf8mb4_0900_bin) and MariaDB (utf8mb4_nopad_bin).
 * - Free text (content, prompts, reasoning) and JSON are LONGTEXT in utf8mb4 (emoji fit). JSON stays text:
 *   MySQL 8's JSON type re-serialises documents, which would lose the Python `json.dumps` bytes SQLite keeps
 *   (MariaDB's JSON is LONGTEXT anyway). Structured content keeps SQLite's `"\x00json:"` prefix: MySQL text
 *   holds NUL.
 * - Times are DATETIME(6) in UTC (never TIMESTAMP, which converts through the session time zone); the
 *   TypeScript side sees epoch seconds, exact to the microsecond.
 * - Counters are BIGINT NOT NULL DEFAULT 0, as on Postgres.
 * - InnoDB keys hold at most 3,072 bytes, so indexed binary text has a byte bound (see the constants): ids
 *   fit 1,024 characters of up to 2 UTF-8 bytes (any ASCII id), an index of id and two times still fits.
 *
 * Search (the block index's tables and triggers) and the session-activity maintenance live in custom migrations under drizzle/mysql/.
 */
import {
  type AnyMySqlColumn,
  bigint,
  boolean,
  customType,
  double,
  foreignKey,
  index,
  int,
  mysqlTable,
  primaryKey,
  uniqueIndex,
} from 'drizzle-orm/mysql-core';
import { epochSecondsToDatetime, timestamptzToEpochSeconds } from '../codecs/time.js';

/** Session ids (and the columns that point at them): 3,048 bytes + two DATETIME(6) keys = 3,064 < 3,072. */
export const MYSQL_ID_BYTES = 3048;
/** A title is at most 100 code points (Hermes' limit): 400 UTF-8 bytes. */
export const MYSQL_TITLE_BYTES = 400;
/** Other indexed text (source, Telegram chat/thread/user ids, meta keys). */
export const MYSQL_KEY_BYTES = 1024;
/** Short indexed states (handoff_state, managed_mode). */
export const MYSQL_STATE_BYTES = 255;

const utf8 = (value: Buffer | string): string => (typeof value === 'string' ? value : value.toString('utf8'));

/** Indexed text compared byte for byte: VARBINARY(bytes) holding UTF-8. */
const binaryKey = (name: string, bytes: number) =>
  customType<{ data: string; driverData: Buffer | string }>({
    dataType: () => `varbinary(${bytes})`,
    fromDriver: utf8,
  })(name);

/** Unindexed text that is still compared (roles, reasons, tool names): LONGBLOB holding UTF-8. */
const binaryText = (name: string) =>
  customType<{ data: string; driverData: Buffer | string }>({
    dataType: () => 'longblob',
    fromDriver: utf8,
  })(name);

/** Free text and JSON text: utf8mb4 whatever the server's default character set. */
const freeText = (name: string) =>
  customType<{ data: string; driverData: string }>({
    dataType: () => 'longtext CHARACTER SET utf8mb4 COLLATE utf8mb4_bin',
  })(name);

/** DATETIME(6) in UTC in the database, Unix epoch seconds (a number) in TypeScript. */
const epochSeconds = (name: string) =>
  customType<{ data: number; driverData: string }>({
    dataType: () => 'datetime(6)',
    toDriver: (value) => epochSecondsToDatetime(value),
    fromDriver: (value) => timestamptzToEpochSeconds(String(value)),
  })(name);

const counter = (name: string) => bigint(name, { mode: 'number' }).notNull().default(0);

export const sessions = mysqlTable(
  'sessions',
  {
    id: binaryKey('id', MYSQL_ID_BYTES).primaryKey(),
    source: binaryKey('source', MYSQL_KEY_BYTES).notNull(),
    userId: binaryText('user_id'),
    model: binaryText('model'),
    modelConfig: freeText('model_config'),
    systemPrompt: freeText('system_prompt'),
    parentSessionId: binaryKey('parent_session_id', MYSQL_ID_BYTES),
    startedAt: epochSeconds('started_at').notNull(),
    endedAt: epochSeconds('ended_at'),
    endReason: binaryText('end_reason'),
    messageCount: counter('message_count'),
    toolCallCount: counter('tool_call_count'),
    inputTokens: counter('input_tokens'),
    outputTokens: counter('output_tokens'),
    cacheReadTokens: counter('cache_read_tokens'),
    cacheWriteTokens: counter('cache_write_tokens'),
    reasoningTokens: counter('reasoning_tokens'),
    billingProvider: binaryText('billing_provider'),
    billingBaseUrl: binaryText('billing_base_url'),
    billingMode: binaryText('billing_mode'),
    // DOUBLE: the same IEEE values as SQLite's REAL, so sums agree across backends.
    estimatedCostUsd: double('estimated_cost_usd'),
    actualCostUsd: double('actual_cost_usd'),
    costStatus: binaryText('cost_status'),
    costSource: binaryText('cost_source'),
    pricingVersion: binaryText('pricing_version'),
    title: binaryKey('title', MYSQL_TITLE_BYTES),
    apiCallCount: counter('api_call_count'),
    handoffState: binaryKey('handoff_state', MYSQL_STATE_BYTES),
    handoffPlatform: binaryText('handoff_platform'),
    handoffError: freeText('handoff_error'),
    /**
     * Derived on SQLite and Postgres; on MySQL they stay NULL, and session_activity (below) holds the values:
     * kept as columns so that every dialect's sessions rows have the same columns.
     */
    lastMessageAt: epochSeconds('last_message_at'),
    chainLastActive: epochSeconds('chain_last_active'),
  },
  (t) => [
    // No ON DELETE action, as in Hermes: deletes re-parent children explicitly instead of cascading.
    foreignKey({ columns: [t.parentSessionId], foreignColumns: [t.id], name: 'sessions_parent_session_id_fk' }),
    index('idx_sessions_source').on(t.source),
    index('idx_sessions_parent').on(t.parentSessionId),
    // Ascending, unlike SQLite's: InnoDB ends a secondary index with the primary key, so this one read backwards
    // is (started_at DESC, id DESC), the listing's order with its tie-break, and a page needs no sort.
    index('idx_sessions_started').on(t.startedAt),
    // A unique index admits any number of NULLs in MySQL: Hermes' partial index, without the WHERE.
    uniqueIndex('idx_sessions_title_unique').on(t.title),
    index('idx_sessions_handoff_pending').on(t.handoffState, t.startedAt),
  ],
);

/**
 * MySQL only: each session's kept activity, which SQLite and Postgres keep in sessions.last_message_at and
 * chain_last_active. A session's insert, update or delete changes its compression ancestors' chain_last_active,
 * and a MySQL trigger cannot update the table that fired it (error 1442): so the values live here, kept by the
 * triggers of drizzle/mysql/0006_session_activity_triggers.sql, one row per session. started_at is a copy, so
 * that one index holds the listing's order. No foreign key: the triggers add and remove the rows, and a
 * cascade would change this table inside a sessions statement whose triggers write it too.
 */
export const sessionActivity = mysqlTable(
  'session_activity',
  {
    sessionId: binaryKey('session_id', MYSQL_ID_BYTES).primaryKey(),
    startedAt: epochSeconds('started_at').notNull(),
    lastMessageAt: epochSeconds('last_message_at'),
    chainLastActive: epochSeconds('chain_last_active').notNull(),
  },
  // Read backwards this is (chain_last_active DESC, started_at DESC, session_id DESC): InnoDB ends a secondary
  // index with the primary key. 8 + 8 + 3,048 bytes fit InnoDB's 3,072.
  (t) => [index('idx_session_activity_order').on(t.chainLastActive, t.startedAt)],
);

export const messages = mysqlTable(
  'messages',
  {
    id: bigint('id', { mode: 'number' }).autoincrement().primaryKey(),
    sessionId: binaryKey('session_id', MYSQL_ID_BYTES)
      .notNull()
      .references((): AnyMySqlColumn => sessions.id),
    role: binaryText('role').notNull(),
    /** Text, or `"\x00json:"` + JSON for structured content (as on SQLite). */
    content: freeText('content'),
    toolCallId: binaryText('tool_call_id'),
    toolCalls: freeText('tool_calls'),
    toolName: binaryText('tool_name'),
    timestamp: epochSeconds('timestamp').notNull(),
    tokenCount: int('token_count'),
    finishReason: binaryText('finish_reason'),
    reasoning: freeText('reasoning'),
    reasoningContent: freeText('reasoning_content'),
    reasoningDetails: freeText('reasoning_details'),
    codexReasoningItems: freeText('codex_reasoning_items'),
    codexMessageItems: freeText('codex_message_items'),
  },
  (t) => [index('idx_messages_session').on(t.sessionId, t.timestamp), index('idx_messages_timestamp').on(t.timestamp)],
);

export const stateMeta = mysqlTable('state_meta', {
  key: binaryKey('key', MYSQL_KEY_BYTES).primaryKey(),
  value: freeText('value'),
});

export const telegramDmTopicMode = mysqlTable('telegram_dm_topic_mode', {
  chatId: binaryKey('chat_id', MYSQL_KEY_BYTES).primaryKey(),
  userId: binaryText('user_id').notNull(),
  enabled: boolean('enabled').notNull().default(true),
  activatedAt: epochSeconds('activated_at').notNull(),
  updatedAt: epochSeconds('updated_at').notNull(),
  hasTopicsEnabled: boolean('has_topics_enabled'),
  allowsUsersToCreateTopics: boolean('allows_users_to_create_topics'),
  capabilityCheckedAt: epochSeconds('capability_checked_at'),
  introMessageId: binaryText('intro_message_id'),
  pinnedMessageId: binaryText('pinned_message_id'),
});

export const telegramDmTopicBindings = mysqlTable(
  'telegram_dm_topic_bindings',
  {
    chatId: binaryKey('chat_id', MYSQL_KEY_BYTES).notNull(),
    threadId: binaryKey('thread_id', MYSQL_KEY_BYTES).notNull(),
    userId: binaryKey('user_id', MYSQL_KEY_BYTES).notNull(),
    sessionKey: binaryText('session_key').notNull(),
    sessionId: binaryKey('session_id', MYSQL_ID_BYTES)
      .notNull()
      .references(() => sessions.id, { onDelete: 'cascade' }),
    managedMode: binaryKey('managed_mode', MYSQL_STATE_BYTES).notNull().default('auto'),
    linkedAt: epochSeconds('linked_at').notNull(),
    updatedAt: epochSeconds('updated_at').notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.chatId, t.threadId] }),
    uniqueIndex('idx_telegram_dm_topic_bindings_session').on(t.sessionId),
    index('idx_telegram_dm_topic_bindings_user').on(t.userId, t.chatId),
  ],
);
