/**
 * PostgreSQL tables: the same Hermes v11 data, typed the way Postgres wants it.
 *
 * - Times are `timestamptz`; the TypeScript side still sees epoch seconds (see `epochSeconds`).
 * - JSON columns are `jsonb`.
 * - Message ids are a `bigint` identity *by default*, so an import can keep the ids it copies.
 * - Structured (list/dict) content goes to `content_json` (jsonb); `content` holds plain text only,
 *   because Postgres text cannot carry the NUL byte of SQLite's `"\x00json:"` prefix.
 * - Session counters are bigint NOT NULL DEFAULT 0 (SQLite allows NULL only because Hermes added them with
 *   ALTER TABLE); a message's token_count is integer.
 *
 * Search structures (pg_trgm, the generated tsvector column and the GIN indexes) are in the custom
 * migrations under `drizzle/pg/`, next to the generated ones.
 */
import { sql } from 'drizzle-orm';
import {
  type AnyPgColumn,
  type ConvertCustomConfig,
  type PgCustomColumnBuilder,
  bigint,
  boolean,
  check,
  customType,
  doublePrecision,
  foreignKey,
  index,
  integer,
  jsonb,
  pgTable,
  primaryKey,
  text,
  uniqueIndex,
} from 'drizzle-orm/pg-core';
import { epochSecondsToTimestamptz, timestamptzToEpochSeconds } from '../codecs/time.js';

type EpochSecondsValues = { data: number; driverData: string };

/**
 * The column builder `epochSeconds` is, spelled out: drizzle's own inferred type has a
 * `Record<string, any>` overload, and no published type of ours may carry `any`.
 */
export interface EpochSecondsBuilder {
  (): PgCustomColumnBuilder<ConvertCustomConfig<'', EpochSecondsValues>>;
  (fieldConfig?: Record<string, unknown>): PgCustomColumnBuilder<ConvertCustomConfig<'', EpochSecondsValues>>;
  <TName extends string>(dbName: TName, fieldConfig?: unknown): PgCustomColumnBuilder<ConvertCustomConfig<TName, EpochSecondsValues>>;
}

/** `timestamptz` in the database, Unix epoch seconds (a number) in TypeScript. */
export const epochSeconds: EpochSecondsBuilder = customType<EpochSecondsValues>({
  dataType: () => 'timestamp with time zone',
  toDriver: (value) => epochSecondsToTimestamptz(value),
  fromDriver: (value) => timestamptzToEpochSeconds(value),
});

/**
 * Session counters are bigint: tokens and API calls summed over a session's life pass 2^31, and SQLite's
 * integers are 64-bit. Values stay within Number.MAX_SAFE_INTEGER (validation), so 'number' is exact.
 */
const counter = (name: string) => bigint(name, { mode: 'number' }).notNull().default(0);

export const sessions = pgTable(
  'sessions',
  {
    id: text('id').primaryKey(),
    source: text('source').notNull(),
    userId: text('user_id'),
    model: text('model'),
    modelConfig: jsonb('model_config').$type<unknown>(),
    systemPrompt: text('system_prompt'),
    parentSessionId: text('parent_session_id'),
    startedAt: epochSeconds('started_at').notNull(),
    endedAt: epochSeconds('ended_at'),
    endReason: text('end_reason'),
    messageCount: counter('message_count'),
    toolCallCount: counter('tool_call_count'),
    inputTokens: counter('input_tokens'),
    outputTokens: counter('output_tokens'),
    cacheReadTokens: counter('cache_read_tokens'),
    cacheWriteTokens: counter('cache_write_tokens'),
    reasoningTokens: counter('reasoning_tokens'),
    billingProvider: text('billing_provider'),
    billingBaseUrl: text('billing_base_url'),
    billingMode: text('billing_mode'),
    // double precision, not numeric: the same IEEE values as SQLite's REAL, so sums agree across backends.
    estimatedCostUsd: doublePrecision('estimated_cost_usd'),
    actualCostUsd: doublePrecision('actual_cost_usd'),
    costStatus: text('cost_status'),
    costSource: text('cost_source'),
    pricingVersion: text('pricing_version'),
    title: text('title'),
    apiCallCount: counter('api_call_count'),
    handoffState: text('handoff_state'),
    handoffPlatform: text('handoff_platform'),
    handoffError: text('handoff_error'),
  },
  (t) => [
    // No ON DELETE action, as in Hermes: deletes re-parent children explicitly instead of cascading.
    foreignKey({ columns: [t.parentSessionId], foreignColumns: [t.id] }),
    index('idx_sessions_source').on(t.source),
    index('idx_sessions_parent').on(t.parentSessionId),
    index('idx_sessions_started').on(t.startedAt.desc()),
    uniqueIndex('idx_sessions_title_unique').on(t.title).where(sql`${t.title} IS NOT NULL`),
    index('idx_sessions_handoff_pending').on(t.handoffState, t.startedAt),
  ],
);

export const messages = pgTable(
  'messages',
  {
    id: bigint('id', { mode: 'number' }).primaryKey().generatedByDefaultAsIdentity(),
    sessionId: text('session_id')
      .notNull()
      .references((): AnyPgColumn => sessions.id),
    role: text('role').notNull(),
    /** Plain-text content. */
    content: text('content'),
    /** Structured (list/dict) content; never set together with `content`. */
    contentJson: jsonb('content_json').$type<unknown>(),
    toolCallId: text('tool_call_id'),
    toolCalls: jsonb('tool_calls').$type<unknown>(),
    toolName: text('tool_name'),
    timestamp: epochSeconds('timestamp').notNull(),
    // One message's tokens: a 32-bit integer, as validation bounds it on every backend.
    tokenCount: integer('token_count'),
    finishReason: text('finish_reason'),
    reasoning: text('reasoning'),
    reasoningContent: text('reasoning_content'),
    reasoningDetails: jsonb('reasoning_details').$type<unknown>(),
    codexReasoningItems: jsonb('codex_reasoning_items').$type<unknown>(),
    codexMessageItems: jsonb('codex_message_items').$type<unknown>(),
  },
  (t) => [
    index('idx_messages_session').on(t.sessionId, t.timestamp),
    // Newest-first search results stop after the first page instead of sorting every match.
    index('idx_messages_timestamp').on(t.timestamp),
    check('messages_content_one_form', sql`${t.content} IS NULL OR ${t.contentJson} IS NULL`),
  ],
);

export const stateMeta = pgTable('state_meta', {
  key: text('key').primaryKey(),
  value: text('value'),
});

export const telegramDmTopicMode = pgTable('telegram_dm_topic_mode', {
  chatId: text('chat_id').primaryKey(),
  userId: text('user_id').notNull(),
  enabled: boolean('enabled').notNull().default(true),
  activatedAt: epochSeconds('activated_at').notNull(),
  updatedAt: epochSeconds('updated_at').notNull(),
  hasTopicsEnabled: boolean('has_topics_enabled'),
  allowsUsersToCreateTopics: boolean('allows_users_to_create_topics'),
  capabilityCheckedAt: epochSeconds('capability_checked_at'),
  introMessageId: text('intro_message_id'),
  pinnedMessageId: text('pinned_message_id'),
});

export const telegramDmTopicBindings = pgTable(
  'telegram_dm_topic_bindings',
  {
    chatId: text('chat_id').notNull(),
    threadId: text('thread_id').notNull(),
    userId: text('user_id').notNull(),
    sessionKey: text('session_key').notNull(),
    sessionId: text('session_id')
      .notNull()
      .references(() => sessions.id, { onDelete: 'cascade' }),
    managedMode: text('managed_mode').notNull().default('auto'),
    linkedAt: epochSeconds('linked_at').notNull(),
    updatedAt: epochSeconds('updated_at').notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.chatId, t.threadId] }),
    uniqueIndex('idx_telegram_dm_topic_bindings_session').on(t.sessionId),
    index('idx_telegram_dm_topic_bindings_user').on(t.userId, t.chatId),
  ],
);
