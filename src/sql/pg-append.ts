/**
 * Postgres appendMessage in one statement: the counter UPDATE is the existence check and locks the session
 * row, the INSERT takes its rows from the UPDATE's RETURNING, so an unknown session writes nothing, and the
 * statement is atomic without BEGIN/COMMIT (one round trip). Its text is compiled once by Drizzle and sent as
 * a named prepared statement; each call sends only bare parameters, encoded by `pgParam` exactly as the
 * dialect's SQL slots encode them for the generic appendMessageOp (sql/messages.ts), so both write the same row.
 */
import { type SQL, sql } from 'drizzle-orm';
import { PgDialect as DrizzlePgCompiler } from 'drizzle-orm/pg-core';
import { isStructured } from '../codecs/content.js';
import { encodePgJsonText, encodePgText } from '../codecs/pg-text.js';
import { epochSecondsToTimestamptz } from '../codecs/time.js';
import type { AppendedMessage } from '../db/dialect.js';
import { jsonIfTruthy } from './messages.js';
import type { PgNames } from './tables.js';

/** Parameter values as Postgres is sent them: the dialect's typed slots and the append statement share these. */
export const pgParam = {
  freeText: (v: string | null | undefined): string | null => (v === null || v === undefined ? null : encodePgText(v)),
  time: (v: number | null | undefined): string | null =>
    v === null || v === undefined ? null : epochSecondsToTimestamptz(v),
  json: (v: unknown): string | null => (v === null || v === undefined ? null : encodePgJsonText(JSON.stringify(v))),
  /** Content as [content, content_json]: plain text in `content`, structured content as JSON in `content_json`. */
  content: (content: AppendedMessage['content']): [string | null, string | null] => {
    if (isStructured(content)) return [null, encodePgJsonText(JSON.stringify(content))];
    return [content === null || content === undefined ? null : encodePgText(content), null];
  },
};

/** The statement's parameters, in the order its text numbers them ($1, $2, …). */
const PARAMS = [
  'toolCallCount',
  'sessionId',
  'role',
  'toolCallId',
  'toolCalls',
  'toolName',
  'timestamp',
  'tokenCount',
  'finishReason',
  'reasoning',
  'reasoningContent',
  'reasoningDetails',
  'codexReasoningItems',
  'codexMessageItems',
  'content',
  'contentJson',
] as const;

const p = (name: (typeof PARAMS)[number], type: string): SQL => sql`${sql.placeholder(name)}::${sql.raw(type)}`;

export interface PgAppendStatement {
  /** The statement text: $1…$16, rows `{ id }` (none when the session does not exist). */
  readonly text: string;
  /** The bare parameters of one message, in the text's order. */
  params(m: AppendedMessage): unknown[];
}

/** The append statement for a store's tables (`t`: its schema's names). */
export function pgAppendStatement(t: PgNames): PgAppendStatement {
  const query = new DrizzlePgCompiler().sqlToQuery(sql`WITH bumped AS (
      UPDATE ${t.sessions} SET message_count = COALESCE(message_count, 0) + 1,
                          tool_call_count = COALESCE(tool_call_count, 0) + ${p('toolCallCount', 'int8')}
      WHERE id = ${p('sessionId', 'text')} RETURNING id)
    INSERT INTO ${t.messages} (session_id, role, tool_call_id, tool_calls, tool_name, timestamp, token_count,
        finish_reason, reasoning, reasoning_content, reasoning_details, codex_reasoning_items, codex_message_items,
        content, content_json)
    SELECT bumped.id, ${p('role', 'text')}, ${p('toolCallId', 'text')}, ${p('toolCalls', 'jsonb')},
        ${p('toolName', 'text')}, ${p('timestamp', 'timestamptz')}, ${p('tokenCount', 'int8')},
        ${p('finishReason', 'text')}, ${p('reasoning', 'text')}, ${p('reasoningContent', 'text')},
        ${p('reasoningDetails', 'jsonb')}, ${p('codexReasoningItems', 'jsonb')}, ${p('codexMessageItems', 'jsonb')},
        ${p('content', 'text')}, ${p('contentJson', 'jsonb')}
    FROM bumped RETURNING id`);
  const order = query.params.map((param) => (param as { name?: unknown }).name);
  if (order.join() !== PARAMS.join()) throw new Error(`append statement parameters out of order: ${order.join()}`);
  return {
    text: query.sql,
    params: (m) => {
      const [content, contentJson] = pgParam.content(m.content);
      return [
        m.toolCallCount,
        m.sessionId,
        m.role,
        pgParam.freeText(m.toolCallId),
        pgParam.json(jsonIfTruthy(m.toolCalls)),
        pgParam.freeText(m.toolName),
        pgParam.time(m.timestamp),
        m.tokenCount ?? null,
        pgParam.freeText(m.finishReason),
        pgParam.freeText(m.reasoning),
        pgParam.freeText(m.reasoningContent),
        pgParam.json(jsonIfTruthy(m.reasoningDetails)),
        pgParam.json(jsonIfTruthy(m.codexReasoningItems)),
        pgParam.json(jsonIfTruthy(m.codexMessageItems)),
        content,
        contentJson,
      ];
    },
  };
}
