/**
 * SQLite tables: the Hermes `state.db` schema v11, column for column.
 *
 * Types, defaults and nullability follow Hermes' SCHEMA_SQL exactly (REAL epoch seconds, TEXT JSON,
 * `"\x00json:"`-prefixed structured content) so that the Python reference opens a file we create and we
 * open one it created. The FTS5 tables and their triggers cannot be modelled here; they live in the custom
 * migration `drizzle/sqlite/*_fts5_search.sql`.
 */
import { sql } from 'drizzle-orm';
import {
  type AnySQLiteColumn,
  foreignKey,
  index,
  integer,
  primaryKey,
  real,
  sqliteTable,
  text,
  uniqueIndex,
} from 'drizzle-orm/sqlite-core';

/** Hermes reads this single row to decide which data migrations to run; we pin it at 11. */
export const schemaVersion = sqliteTable('schema_version', {
  version: integer('version').notNull(),
});

export const sessions = sqliteTable(
  'sessions',
  {
    id: text('id').primaryKey(),
    source: text('source').notNull(),
    userId: text('user_id'),
    model: text('model'),
    /** JSON text (Python `json.dumps` format). */
    modelConfig: text('model_config'),
    systemPrompt: text('system_prompt'),
    parentSessionId: text('parent_session_id'),
    /** Unix epoch seconds with sub-second precision. */
    startedAt: real('started_at').notNull(),
    endedAt: real('ended_at'),
    endReason: text('end_reason'),
    messageCount: integer('message_count').default(0),
    toolCallCount: integer('tool_call_count').default(0),
    inputTokens: integer('input_tokens').default(0),
    outputTokens: integer('output_tokens').default(0),
    cacheReadTokens: integer('cache_read_tokens').default(0),
    cacheWriteTokens: integer('cache_write_tokens').default(0),
    reasoningTokens: integer('reasoning_tokens').default(0),
    billingProvider: text('billing_provider'),
    billingBaseUrl: text('billing_base_url'),
    billingMode: text('billing_mode'),
    estimatedCostUsd: real('estimated_cost_usd'),
    actualCostUsd: real('actual_cost_usd'),
    costStatus: text('cost_status'),
    costSource: text('cost_source'),
    pricingVersion: text('pricing_version'),
    title: text('title'),
    apiCallCount: integer('api_call_count').default(0),
    handoffState: text('handoff_state'),
    handoffPlatform: text('handoff_platform'),
    handoffError: text('handoff_error'),
    /**
     * Derived, kept by triggers (custom migration *_session_activity): the newest message's timestamp (NULL
     * without messages), and Hermes' order_by_last_active key — the newest activity over this session and its
     * compression continuations. Hermes ignores both; every writer, Hermes' own included, keeps them right.
     */
    lastMessageAt: real('last_message_at'),
    chainLastActive: real('chain_last_active'),
  },
  (t) => [
    // No ON DELETE action, as in Hermes: deletes re-parent children explicitly instead of cascading.
    foreignKey({ columns: [t.parentSessionId], foreignColumns: [t.id] }),
    index('idx_sessions_source').on(t.source),
    index('idx_sessions_parent').on(t.parentSessionId),
    index('idx_sessions_started').on(sql`${t.startedAt} DESC`),
    uniqueIndex('idx_sessions_title_unique').on(t.title).where(sql`${t.title} IS NOT NULL`),
    // Serves the gateway's pending-handoff poll; the name is the one later Hermes versions create.
    index('idx_sessions_handoff_pending').on(t.handoffState, t.startedAt),
    // listSessionsRich({ orderByLastActive }) reads the first `limit` entries instead of walking every chain.
    index('idx_sessions_chain_last_active').on(
      sql`${t.chainLastActive} DESC`,
      sql`${t.startedAt} DESC`,
      sql`${t.id} DESC`,
    ),
  ],
);

export const messages = sqliteTable(
  'messages',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    sessionId: text('session_id')
      .notNull()
      .references((): AnySQLiteColumn => sessions.id),
    role: text('role').notNull(),
    /** Plain text, or `"\x00json:" + json.dumps(value)` for structured (list/dict) content. */
    content: text('content'),
    toolCallId: text('tool_call_id'),
    /** JSON text. */
    toolCalls: text('tool_calls'),
    toolName: text('tool_name'),
    timestamp: real('timestamp').notNull(),
    tokenCount: integer('token_count'),
    finishReason: text('finish_reason'),
    reasoning: text('reasoning'),
    reasoningContent: text('reasoning_content'),
    /** JSON text. */
    reasoningDetails: text('reasoning_details'),
    /** JSON text. */
    codexReasoningItems: text('codex_reasoning_items'),
    /** JSON text. */
    codexMessageItems: text('codex_message_items'),
  },
  (t) => [
    index('idx_messages_session').on(t.sessionId, t.timestamp),
    // Newest-first search results stop after the first page instead of sorting every match.
    index('idx_messages_timestamp').on(t.timestamp),
  ],
);

export const stateMeta = sqliteTable('state_meta', {
  key: text('key').primaryKey(),
  value: text('value'),
});

/** Telegram DM topic mode, topic schema v2 (Hermes creates it lazily; we create it up front). */
export const telegramDmTopicMode = sqliteTable('telegram_dm_topic_mode', {
  chatId: text('chat_id').primaryKey(),
  userId: text('user_id').notNull(),
  enabled: integer('enabled').notNull().default(1),
  activatedAt: real('activated_at').notNull(),
  updatedAt: real('updated_at').notNull(),
  hasTopicsEnabled: integer('has_topics_enabled'),
  allowsUsersToCreateTopics: integer('allows_users_to_create_topics'),
  capabilityCheckedAt: real('capability_checked_at'),
  introMessageId: text('intro_message_id'),
  pinnedMessageId: text('pinned_message_id'),
});

export const telegramDmTopicBindings = sqliteTable(
  'telegram_dm_topic_bindings',
  {
    chatId: text('chat_id').notNull(),
    threadId: text('thread_id').notNull(),
    userId: text('user_id').notNull(),
    sessionKey: text('session_key').notNull(),
    // Topic schema v2: a binding dies with its session (the one cascade Hermes has).
    sessionId: text('session_id')
      .notNull()
      .references(() => sessions.id, { onDelete: 'cascade' }),
    managedMode: text('managed_mode').notNull().default('auto'),
    linkedAt: real('linked_at').notNull(),
    updatedAt: real('updated_at').notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.chatId, t.threadId] }),
    uniqueIndex('idx_telegram_dm_topic_bindings_session').on(t.sessionId),
    index('idx_telegram_dm_topic_bindings_user').on(t.userId, t.chatId),
  ],
);
