/**
 * Telegram DM topic mode: one private chat hosting several sessions, one per topic (thread). The tables
 * exist from the migrations (Hermes creates them lazily), but enabling or binding still records
 * state_meta telegram_dm_topic_schema_version = '2', because Hermes reads it.
 */
import { sql } from 'drizzle-orm';
import { exec, first, rows } from '../db/ops.js';
import { SessionNotFoundError, TopicAlreadyLinkedError } from '../errors.js';
import { richColumns } from '../sql/listing.js';
import type { RichSessionRow, TelegramTopicBinding } from '../types.js';
import { type RepoContext, sqlLimit } from './context.js';
import { setMetaOp } from './meta.js';
import { decodeBinding, decodeRichSession } from './rows.js';
import * as v from '../validation.js';
import type { z } from 'zod';

export const TOPIC_SCHEMA_VERSION_KEY = 'telegram_dm_topic_schema_version';
export const TOPIC_SCHEMA_VERSION = '2';

export interface EnableTopicMode {
  chatId: string;
  userId: string;
  hasTopicsEnabled?: boolean | null;
  allowsUsersToCreateTopics?: boolean | null;
}

/** A binding as written: the stored row without the times the store sets. */
export type BindTopic = Omit<TelegramTopicBinding, 'linkedAt' | 'updatedAt'>;

export class TelegramTopicRepo {
  constructor(private readonly ctx: RepoContext) {}

  /** Turn topic mode on for a chat. An existing row keeps activated_at; its capability flags are overwritten. */
  async enable(options: z.input<typeof v.enableTopicModeOptions>): Promise<void> {
    const { d, run } = this.ctx;
    const o: EnableTopicMode = v.validate(v.enableTopicModeOptions, options, 'options');
    const now = this.ctx.now();
    const markSchema = setMetaOp(d, TOPIC_SCHEMA_VERSION_KEY, TOPIC_SCHEMA_VERSION);
    return run.write(function* () {
      yield* markSchema();
      yield* exec(sql`
        INSERT INTO ${d.t.telegramDmTopicMode} (chat_id, user_id, enabled, activated_at, updated_at, has_topics_enabled,
                                            allows_users_to_create_topics, capability_checked_at)
        VALUES (${d.text(o.chatId)}, ${d.text(o.userId)}, ${d.bool(true)}, ${d.time(now)}, ${d.time(now)},
                ${d.bool(o.hasTopicsEnabled)}, ${d.bool(o.allowsUsersToCreateTopics)}, ${d.time(now)})
        ${d.onConflict(
          ['chat_id'],
          [
            'user_id',
            'enabled',
            'updated_at',
            'has_topics_enabled',
            'allows_users_to_create_topics',
            'capability_checked_at',
          ],
        )}`);
    });
  }

  async disable(chatId: string | number, clearBindings: boolean = true): Promise<void> {
    const { d, run } = this.ctx;
    ({ chatId, clearBindings } = v.validate(v.disableTopicModeOptions, { chatId, clearBindings }, 'options'));
    const now = this.ctx.now();
    return run.write(function* () {
      yield* exec(sql`UPDATE ${d.t.telegramDmTopicMode} SET enabled = ${d.bool(false)}, updated_at = ${d.time(now)}
                      WHERE chat_id = ${d.text(chatId)}`);
      if (clearBindings) yield* exec(sql`DELETE FROM ${d.t.telegramDmTopicBindings} WHERE chat_id = ${d.text(chatId)}`);
    });
  }

  /** True only when the chat's mode row belongs to this user and is enabled. */
  isEnabled(chatId: string, userId: string): Promise<boolean> {
    const { d, run } = this.ctx;
    return run.read(function* () {
      const row = yield* first<{ enabled: unknown }>(
        sql`SELECT enabled FROM ${d.t.telegramDmTopicMode} WHERE chat_id = ${d.text(chatId)} AND user_id = ${d.text(userId)}`,
      );
      return row ? d.decode.bool(row.enabled) === true : false;
    });
  }

  getBinding(chatId: string, threadId: string): Promise<TelegramTopicBinding | null> {
    const { d, run } = this.ctx;
    return run.read(function* () {
      const row = yield* first(sql`SELECT * FROM ${d.t.telegramDmTopicBindings}
                                   WHERE chat_id = ${d.text(chatId)} AND thread_id = ${d.text(threadId)}`);
      return row ? decodeBinding(row, d.decode) : null;
    });
  }

  /**
   * Bind a topic to a session (upsert on the topic; linked_at survives a re-bind). A session bound to a
   * different topic is refused with TopicAlreadyLinkedError; an unknown session with SessionNotFoundError.
   */
  async bind(options: z.input<typeof v.bindTopicOptions>): Promise<void> {
    const { d, run } = this.ctx;
    const o: BindTopic = v.validate(v.bindTopicOptions, options, 'options');
    const now = this.ctx.now();
    const markSchema = setMetaOp(d, TOPIC_SCHEMA_VERSION_KEY, TOPIC_SCHEMA_VERSION);
    return run.write(function* () {
      yield* markSchema();
      const bound = yield* first<{ chat_id: unknown; thread_id: unknown }>(
        sql`SELECT chat_id, thread_id FROM ${d.t.telegramDmTopicBindings} WHERE session_id = ${d.text(o.sessionId)}`,
      );
      if (bound && (String(bound.chat_id) !== o.chatId || String(bound.thread_id) !== o.threadId)) {
        throw new TopicAlreadyLinkedError(o.sessionId);
      }
      if (!(yield* first(sql`SELECT 1 AS hit FROM ${d.t.sessions} WHERE id = ${d.text(o.sessionId)}`))) {
        throw new SessionNotFoundError(o.sessionId);
      }
      yield* exec(sql`
        INSERT INTO ${d.t.telegramDmTopicBindings} (chat_id, thread_id, user_id, session_key, session_id, managed_mode, linked_at, updated_at)
        VALUES (${d.text(o.chatId)}, ${d.text(o.threadId)}, ${d.text(o.userId)}, ${d.text(o.sessionKey)}, ${d.text(o.sessionId)},
                ${d.text(o.managedMode)}, ${d.time(now)}, ${d.time(now)})
        ${d.onConflict(['chat_id', 'thread_id'], ['user_id', 'session_key', 'session_id', 'managed_mode', 'updated_at'])}`);
    });
  }

  isSessionLinked(sessionId: string): Promise<boolean> {
    const { d, run } = this.ctx;
    return run.read(function* () {
      return (
        (yield* first(
          sql`SELECT 1 AS hit FROM ${d.t.telegramDmTopicBindings} WHERE session_id = ${d.text(sessionId)} LIMIT 1`,
        )) !== undefined
      );
    });
  }

  /**
   * A user's Telegram sessions that no topic is bound to, most recently active first, with preview.
   * `chatId` is accepted but unused, as in Hermes v11 (bindings are per session, whatever the chat).
   */
  listUnlinked(userId: string, limit: number): Promise<RichSessionRow[]> {
    const { d, run } = this.ctx;
    return run.read(function* () {
      const found = yield* rows(sql`
        SELECT * FROM (
          SELECT ${richColumns(d)} FROM ${d.t.sessions} s
          WHERE s.source = 'telegram' AND s.user_id = ${d.text(userId)}
            AND NOT EXISTS (SELECT 1 FROM ${d.t.telegramDmTopicBindings} b WHERE b.session_id = s.id)
        ) listed
        ORDER BY listed.last_active DESC, listed.started_at DESC, ${d.binary(sql`listed.id`)} DESC
        LIMIT ${d.int(sqlLimit(limit))}`);
      return found.map((r) => decodeRichSession(r, d.decode));
    });
  }
}
