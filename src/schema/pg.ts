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
 * Search structures (the block index's tables and queue triggers, the generated CJK grams and their GIN index)
 * are in the custom migrations under `drizzle/pg/`, next to the generated ones.
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
  type PgTableFn,
  pgSchema,
  pgTable,
  primaryKey,
  text,
  uniqueIndex,
} from 'drizzle-orm/pg-core';
import { epochSecondsToTimestamptz, timestamptzToEpochSeconds } from '../codecs/time.js';
import { ValidationError } from '../errors.js';
import { schemaName as validSchemaName } from '../sql/tables.js';

type EpochSecondsValues = { data: number; driverData: string };

/**
 * The column builder `epochSeconds` is, spelled out: drizzle's own inferred type has a
 * `Record<string, any>` overload, and no published type of ours may carry `any`.
 */
export interface EpochSecondsBuilder {
  (): PgCustomColumnBuilder<ConvertCustomConfig<'', EpochSecondsValues>>;
  (fieldConfig?: Record<string, unknown>): PgCustomColumnBuilder<ConvertCustomConfig<'', EpochSecondsValues>>;
  <TName extends string>(
    dbName: TName,
    fieldConfig?: unknown,
  ): PgCustomColumnBuilder<ConvertCustomConfig<TName, EpochSecondsValues>>;
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

/**
 * The five tables, built with `table`: pgTable (the default layout, unqualified as drizzle-kit has always
 * generated it) or pgSchema(name).table (a store opened with `{ schema: name }`).
 */
function buildTables<TSchema extends string | undefined>(table: PgTableFn<TSchema>) {
  const sessions = table(
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
      /** Derived, kept by triggers (custom migration *_session_activity); see the SQLite schema. */
      lastMessageAt: epochSeconds('last_message_at'),
      chainLastActive: epochSeconds('chain_last_active'),
    },
    (t) => [
      // No ON DELETE action, as in Hermes: deletes re-parent children explicitly instead of cascading.
      foreignKey({ columns: [t.parentSessionId], foreignColumns: [t.id] }),
      index('idx_sessions_source').on(t.source),
      index('idx_sessions_parent').on(t.parentSessionId),
      index('idx_sessions_started').on(t.startedAt.desc()),
      uniqueIndex('idx_sessions_title_unique').on(t.title).where(sql`${t.title} IS NOT NULL`),
      index('idx_sessions_handoff_pending').on(t.handoffState, t.startedAt),
      // The listing's ORDER BY, id in byte order as d.binary compares it.
      index('idx_sessions_chain_last_active').on(
        t.chainLastActive.desc(),
        t.startedAt.desc(),
        sql`${t.id} COLLATE "C" DESC NULLS LAST`,
      ),
    ],
  );

  const messages = table(
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

  const stateMeta = table('state_meta', {
    key: text('key').primaryKey(),
    value: text('value'),
  });

  const telegramDmTopicMode = table('telegram_dm_topic_mode', {
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

  const telegramDmTopicBindings = table(
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

  return { sessions, messages, stateMeta, telegramDmTopicMode, telegramDmTopicBindings };
}

const defaultTables = buildTables(pgTable);

// The default layout, as drizzle-kit reads this file (migrations are generated from these).
export const sessions = defaultTables.sessions;
export const messages = defaultTables.messages;
export const stateMeta = defaultTables.stateMeta;
export const telegramDmTopicMode = defaultTables.telegramDmTopicMode;
export const telegramDmTopicBindings = defaultTables.telegramDmTopicBindings;

/** Our five tables (the type is the same whichever schema they live in). */
export type HermesPgTables = typeof defaultTables;

/**
 * Our tables for an app's own Drizzle queries, in the schema the store was opened with (`openStore(url, { schema })`).
 * No name, or 'public', gives the default layout's tables (the top-level exports: unqualified, so Drizzle
 * leaves the schema to the connection's search_path, as before); any other name gives tables Drizzle always
 * qualifies with that schema. Tables of one schema are built once and shared.
 */
export function hermesPgTables(schemaName?: string): HermesPgTables {
  if (schemaName === undefined || schemaName === 'public') return defaultTables;
  const checked = validSchemaName.safeParse(schemaName);
  if (!checked.success)
    throw new ValidationError('schemaName', checked.error.issues[0]?.message ?? 'invalid', { cause: checked.error });
  let tables = bySchema.get(schemaName);
  // Only the schema differs, which the column types do not depend on.
  if (!tables) {
    tables = buildTables(pgSchema(schemaName).table) as unknown as HermesPgTables;
    bySchema.set(schemaName, tables);
  }
  return tables;
}
const bySchema = new Map<string, HermesPgTables>();
