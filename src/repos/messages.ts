/**
 * Messages: append (row and session counters in one transaction), atomic transcript replacement, reads,
 * conversation replay, and windows around an anchor message.
 */
import { type SQL, sql } from 'drizzle-orm';
import type { MessageContentInput } from '../codecs/content.js';
import { roundToMicros } from '../codecs/time.js';
import { type Op, changes, exec, first, inserted, rows, values } from '../db/ops.js';
import { SessionNotFoundError } from '../errors.js';
import { ancestorMessages } from '../sql/lineage.js';
import { type MessageFields, messageValues } from '../sql/messages.js';
import type { AnchoredView, ConversationMessage, HermesRole, MessageRow, MessagesAround } from '../types.js';
import type { RepoContext } from './context.js';
import { toConversation } from './conversation.js';
import {
  type ReplayRow,
  decodeMessage,
  decodePackedReplayValues,
  decodeReplayValues,
  messageRowFromValues,
} from './rows.js';
import * as v from '../validation.js';
import type { z } from 'zod';

export type { MessageFields };

export interface ReplacementMessage extends MessageFields {
  role?: string;
  content?: MessageContentInput | null;
}

/** Hermes' tool-call count: a list counts its items, any other non-null value counts 1. */
export function toolCallCount(toolCalls: unknown): number {
  if (toolCalls === null || toolCalls === undefined) return 0;
  return Array.isArray(toolCalls) ? toolCalls.length : 1;
}

/** Rows per multi-row INSERT: 16 parameters a row stays far below Postgres' 65,535 and SQLite's 32,766. */
const INSERT_BATCH = 1000;

export class MessageRepo {
  constructor(private readonly ctx: RepoContext) {}

  /**
   * Insert one message and bump the session's counters; the session must exist. Returns the new id.
   * Validated as appendMessage is (the store's appendMessage delegates here).
   */
  async append(
    sessionId: string,
    role: HermesRole,
    content?: MessageContentInput | null,
    options: z.input<typeof v.appendMessageOptions> = {},
  ): Promise<number> {
    const { run } = this.ctx;
    sessionId = v.validate(v.id, sessionId, 'sessionId');
    role = v.validate(v.role, role, 'role');
    content = v.validate(v.content, content, 'content');
    const fields: MessageFields = v.validate(v.appendMessageOptions, options, 'options');
    return run.appendMessage({
      ...fields,
      sessionId,
      role,
      content,
      timestamp: this.ctx.now(),
      toolCallCount: toolCallCount(fields.toolCalls),
    });
  }

  /**
   * Append several messages to one session in one transaction (one commit for all): the counters move
   * once, timestamps are now + 1 µs per message to keep the order. Returns the ids in the given order.
   * Nothing is written when the session does not exist. Validated as appendMessages is.
   */
  async appendMany(sessionId: string, input: z.input<typeof v.appendMessagesInput>): Promise<number[]> {
    const { d, run } = this.ctx;
    sessionId = v.validate(v.id, sessionId, 'sessionId');
    const messages: Array<ReplacementMessage & { role: string }> = v.validate(v.appendMessagesInput, input, 'messages');
    if (messages.length === 0) return Promise.resolve([]);
    const now = this.ctx.now();
    const batches: SQL[] = [];
    let toolCalls = 0;
    for (let i = 0; i < messages.length; i += INSERT_BATCH) {
      const chunk = messages.slice(i, i + INSERT_BATCH).map((m, k) => {
        toolCalls += toolCallCount(m.toolCalls);
        return messageValues(this.ctx.d, sessionId, m.role, m.content, m, roundToMicros(now + (i + k) * 1e-6), true);
      });
      batches.push(
        sql`INSERT INTO ${d.t.messages} (${chunk[0]!.columns}) VALUES ${sql.join(
          chunk.map((v) => v.values),
          sql`, `,
        )}`,
      );
    }
    return run.write(
      function* () {
        const touched = yield* changes(sql`
        UPDATE ${d.t.sessions} SET message_count = COALESCE(message_count, 0) + ${d.int(messages.length)},
                            tool_call_count = COALESCE(tool_call_count, 0) + ${d.int(toolCalls)}
        WHERE id = ${d.text(sessionId)}`);
        if (touched === 0) throw new SessionNotFoundError(sessionId);
        const ids: number[] = [];
        for (const batch of batches) ids.push(...(yield* inserted(batch)));
        return ids;
      },
      { lane: sessionId },
    );
  }

  /**
   * Replace a session's whole transcript in one transaction (retry, undo, compress). Timestamps are now,
   * +1 µs per message to keep the order; reasoning fields are kept on assistant messages only.
   * An empty list clears the transcript (silently, even for an unknown session, as in Hermes).
   * Validated as replaceMessages is.
   */
  async replace(sessionId: string, input: Array<Record<string, unknown>>): Promise<void> {
    const { d, run } = this.ctx;
    sessionId = v.validate(v.id, sessionId, 'sessionId');
    const messages: ReplacementMessage[] = v.validate(v.replacementMessages, input, 'messages');
    const now = this.ctx.now();
    const batches: SQL[] = [];
    let toolCalls = 0;
    let chunk: SQL[] = [];
    messages.forEach((m, k) => {
      const role = m.role ?? 'unknown';
      const v = messageValues(
        this.ctx.d,
        sessionId,
        role,
        m.content,
        m,
        roundToMicros(now + k * 1e-6),
        role === 'assistant',
      );
      toolCalls += toolCallCount(m.toolCalls);
      chunk.push(v.values);
      if (chunk.length === INSERT_BATCH || k === messages.length - 1) {
        batches.push(sql`INSERT INTO ${d.t.messages} (${v.columns}) VALUES ${sql.join(chunk, sql`, `)}`);
        chunk = [];
      }
    });
    return run.write(
      function* () {
        const touched = yield* changes(sql`
        UPDATE ${d.t.sessions} SET message_count = ${d.int(messages.length)}, tool_call_count = ${d.int(toolCalls)}
        WHERE id = ${d.text(sessionId)}`);
        if (touched === 0 && messages.length > 0) throw new SessionNotFoundError(sessionId);
        yield* exec(sql`DELETE FROM ${d.t.messages} WHERE session_id = ${d.text(sessionId)}`);
        for (const batch of batches) yield* exec(batch);
      },
      { lane: sessionId },
    );
  }

  /**
   * Messages read as values (rows.ts messageRowFromValues): reads of hundreds of messages spend more on
   * the drivers' keyed row objects than on anything else.
   */
  private messagesOp(query: SQL) {
    const { d } = this.ctx;
    return function* () {
      const found = yield* values(query);
      const out: MessageRow[] = new Array(found.length);
      for (let i = 0; i < found.length; i++) out[i] = decodeMessage(messageRowFromValues(found[i]!), d.decode);
      return out;
    };
  }

  private listOp(sessionId: string) {
    const { d } = this.ctx;
    return this.messagesOp(sql`
        SELECT ${d.messageColumns('m')} FROM ${d.t.messages} m
        WHERE m.session_id = ${d.text(sessionId)}
        ORDER BY m.id`);
  }

  /** A session's messages in insertion (id) order. */
  list(sessionId: string): Promise<MessageRow[]> {
    return this.ctx.run.read(this.listOp(sessionId));
  }

  listOpFor(sessionId: string) {
    return this.listOp(sessionId);
  }

  /**
   * Messages as a model replay; with ancestors, the whole parent chain first and resent prompts dropped.
   * The ancestors' messages come in the same statement as the walk (one round trip on Postgres).
   */
  conversation(sessionId: string, includeAncestors: boolean): Promise<ConversationMessage[]> {
    const { d, run } = this.ctx;
    const columns = d.replayColumns('m');
    const query = includeAncestors
      ? ancestorMessages(d, sessionId, columns)
      : sql`SELECT ${columns} FROM ${d.t.messages} m WHERE m.session_id = ${d.text(sessionId)} ORDER BY m.id`;
    return run.read(function* () {
      const found = yield* values(query);
      const rows: ReplayRow[] = new Array(found.length);
      const decode = d.replayPacked ? decodePackedReplayValues : decodeReplayValues;
      for (let i = 0; i < found.length; i++) rows[i] = decode(found[i]!, d.decode);
      return toConversation(rows, includeAncestors);
    });
  }

  private aroundOp(sessionId: string, anchorId: number, window: number) {
    const { d } = this.ctx;
    const w = Math.max(0, window);
    return function* (): Op<MessagesAround> {
      // An integer past 2^53 cannot be a stored id exactly, so nothing is looked up for it.
      if (!Number.isSafeInteger(anchorId)) return { window: [], messagesBefore: 0, messagesAfter: 0 };
      const anchor = yield* first(
        sql`SELECT id FROM ${d.t.messages} WHERE id = ${d.int(anchorId)} AND session_id = ${d.text(sessionId)}`,
      );
      if (!anchor) return { window: [], messagesBefore: 0, messagesAfter: 0 };
      const before = yield* rows(sql`
        SELECT ${d.messageColumns('m')} FROM ${d.t.messages} m WHERE m.session_id = ${d.text(sessionId)} AND m.id <= ${d.int(anchorId)}
        ORDER BY m.id DESC LIMIT ${d.int(w + 1)}`);
      const after = yield* rows(sql`
        SELECT ${d.messageColumns('m')} FROM ${d.t.messages} m WHERE m.session_id = ${d.text(sessionId)} AND m.id > ${d.int(anchorId)}
        ORDER BY m.id ASC LIMIT ${d.int(w)}`);
      return {
        window: [...before.reverse(), ...after].map((r) => decodeMessage(r, d.decode)),
        messagesBefore: before.length - 1,
        messagesAfter: after.length,
      };
    };
  }

  around(sessionId: string, anchorId: number, window: number): Promise<MessagesAround> {
    return this.ctx.run.read(this.aroundOp(sessionId, anchorId, window));
  }

  /**
   * The window around an anchor filtered to `keepRoles` (the anchor always stays), plus bookends: the
   * first and last `bookend` messages outside the window with a kept role and non-empty content.
   * `keepRoles: null` keeps every role.
   */
  anchoredView(
    sessionId: string,
    anchorId: number,
    window: number,
    bookend: number,
    keepRoles: string[] | null,
  ): Promise<AnchoredView> {
    const { d, run } = this.ctx;
    const aroundOp = this.aroundOp(sessionId, anchorId, window);
    const b = Math.max(0, bookend);
    const roleFilter = (alias: string) =>
      keepRoles === null
        ? sql``
        : keepRoles.length === 0
          ? sql`AND 1 = 0`
          : sql`AND ${sql.raw(alias)}.role IN (${sql.join(
              keepRoles.map((r) => d.text(r)),
              sql`, `,
            )})`;
    return run.read(function* () {
      const around = yield* aroundOp();
      if (around.window.length === 0) return { ...around, bookendStart: [], bookendEnd: [] };
      const firstId = around.window[0]!.id;
      const lastId = around.window[around.window.length - 1]!.id;
      const start = yield* rows(sql`
        SELECT ${d.messageColumns('m')} FROM ${d.t.messages} m
        WHERE m.session_id = ${d.text(sessionId)} AND m.id < ${d.int(firstId)} ${roleFilter('m')} AND ${d.contentLength('m')} > 0
        ORDER BY m.id ASC LIMIT ${d.int(b)}`);
      const end = yield* rows(sql`
        SELECT ${d.messageColumns('m')} FROM ${d.t.messages} m
        WHERE m.session_id = ${d.text(sessionId)} AND m.id > ${d.int(lastId)} ${roleFilter('m')} AND ${d.contentLength('m')} > 0
        ORDER BY m.id DESC LIMIT ${d.int(b)}`);
      const kept = keepRoles === null ? null : new Set(keepRoles);
      return {
        window: around.window.filter((m) => kept === null || kept.has(m.role) || m.id === anchorId),
        messagesBefore: around.messagesBefore,
        messagesAfter: around.messagesAfter,
        bookendStart: start.map((r) => decodeMessage(r, d.decode)),
        bookendEnd: end.reverse().map((r) => decodeMessage(r, d.decode)),
      };
    });
  }

  count(sessionId: string | null | undefined): Promise<number> {
    const { d, run } = this.ctx;
    return run.read(function* () {
      const row = yield* first<{ n: unknown }>(
        sessionId
          ? sql`SELECT COUNT(*) AS n FROM ${d.t.messages} WHERE session_id = ${d.text(sessionId)}`
          : sql`SELECT COUNT(*) AS n FROM ${d.t.messages}`,
      );
      return d.decode.int(row?.n);
    });
  }
}
