/**
 * Postgres appendMessage in one statement: the counter UPDATE is the existence check and locks the session
 * row, the INSERT takes its rows from the UPDATE's RETURNING, so an unknown session writes nothing, and the
 * statement is atomic without BEGIN/COMMIT (one round trip). Its text is compiled once by Drizzle and sent as
 * a named prepared statement; each call sends only bare parameters, encoded by `pgParam` exactly as the
 * dialect's SQL slots encode them for the generic appendMessageOp (sql/messages.ts), so both write the same row.
 * Appends that queue up while others are in flight go together in one statement of many rows (`many`).
 */
import { type SQL, sql } from 'drizzle-orm';
import { PgDialect as DrizzlePgCompiler } from 'drizzle-orm/pg-core';
import { isStructured } from '../../codecs/content.js';
import { encodePgJsonText, encodePgText } from './nul-escape.js';
import { epochSecondsToTimestamptz } from '../../codecs/time.js';
import type { AppendedMessage } from '../dialect.js';
import { jsonIfTruthy } from '../../sql/messages.js';
import type { QualifiedNames } from '../../sql/tables.js';

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

/** The parameters of one message, in the order the one-row statement numbers them ($1, $2, …), with their types. */
const PARAMS = [
  ['toolCallCount', 'int8'],
  ['sessionId', 'text'],
  ['role', 'text'],
  ['toolCallId', 'text'],
  ['toolCalls', 'jsonb'],
  ['toolName', 'text'],
  ['timestamp', 'timestamptz'],
  ['tokenCount', 'int8'],
  ['finishReason', 'text'],
  ['reasoning', 'text'],
  ['reasoningContent', 'text'],
  ['reasoningDetails', 'jsonb'],
  ['codexReasoningItems', 'jsonb'],
  ['codexMessageItems', 'jsonb'],
  ['content', 'text'],
  ['contentJson', 'jsonb'],
] as const;
type ParamName = (typeof PARAMS)[number][0];
/** Where a parameter sits in a message's parameter array. */
const at = (name: ParamName) => PARAMS.findIndex(([n]) => n === name);

const INSERT_COLUMNS = sql.raw(
  'session_id, role, tool_call_id, tool_calls, tool_name, timestamp, token_count, finish_reason, reasoning, ' +
    'reasoning_content, reasoning_details, codex_reasoning_items, codex_message_items, content, content_json',
);
/** The message columns' values after session_id, in INSERT_COLUMNS order, each given by `value`. */
const insertValues = (value: (name: ParamName) => SQL) =>
  sql.join(
    PARAMS.slice(at('role')).map(([name]) => value(name)),
    sql`, `,
  );
const typed = (value: SQL, name: ParamName) => sql`${value}::${sql.raw(PARAMS[at(name)]![1])}`;

export interface PgAppendStatements {
  /** One message: $1…$16 in PARAMS order; rows `{ id }`, none when the session does not exist. */
  readonly one: string;
  /**
   * Several messages of distinct sessions (client-side group commit): $1 is a JSON array of their parameter
   * arrays; rows `{ id, session_id }` for the sessions that exist, ids handed out in the array's order.
   */
  readonly many: string;
  /** The bare parameters of one message, in PARAMS order. */
  params(m: AppendedMessage): unknown[];
}

/** Where a message's session id sits in its parameters. */
export const SESSION_PARAM = at('sessionId');

/** The append statements for a store's tables (`t`: its schema's names), compiled once. */
export function pgAppendStatements(t: QualifiedNames): PgAppendStatements {
  const compiler = new DrizzlePgCompiler();
  const placeholder = (name: ParamName) => typed(sql`${sql.placeholder(name)}`, name);
  const one = compiler.sqlToQuery(sql`WITH bumped AS (
      UPDATE ${t.sessions} SET message_count = COALESCE(message_count, 0) + 1,
                          tool_call_count = COALESCE(tool_call_count, 0) + ${placeholder('toolCallCount')}
      WHERE id = ${placeholder('sessionId')} RETURNING id)
    INSERT INTO ${t.messages} (${INSERT_COLUMNS})
    SELECT bumped.id, ${insertValues(placeholder)} FROM bumped RETURNING id`);
  const order = one.params.map((param) => (param as { name?: unknown }).name);
  if (order.join() !== PARAMS.map(([name]) => name).join()) {
    throw new Error(`append statement parameters out of order: ${order.join()}`);
  }
  // Each element of the JSON array is one message's parameters; ->> gives the same text the one-row
  // statement is sent, and the same casts apply. The UPDATE's FROM joins each session once (they are distinct).
  const field = (name: ParamName) => typed(sql.raw(`(x.r->>${at(name)})`), name);
  const many = compiler.sqlToQuery(sql`WITH input AS (
      SELECT x.ord, ${field('sessionId')} AS session_id, ${field('toolCallCount')} AS tool_call_count,
        ${insertValues((name) => sql`${field(name)} AS ${sql.raw(`p${at(name)}`)}`)}
      FROM json_array_elements(${sql.placeholder('messages')}::text::json) WITH ORDINALITY AS x(r, ord)),
    bumped AS (
      UPDATE ${t.sessions} s SET message_count = COALESCE(s.message_count, 0) + 1,
                          tool_call_count = COALESCE(s.tool_call_count, 0) + i.tool_call_count
      FROM input i WHERE s.id = i.session_id RETURNING s.id)
    INSERT INTO ${t.messages} (${INSERT_COLUMNS})
    SELECT i.session_id, ${insertValues((name) => sql.raw(`i.p${at(name)}`))}
    FROM input i JOIN bumped ON bumped.id = i.session_id ORDER BY i.ord RETURNING id, session_id`);
  return {
    one: one.sql,
    many: many.sql,
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
