/**
 * The messages INSERT every write path shares (append, append many, replace), and appendMessage's generic
 * operation: a dialect with a faster hot path (prepared statements, one round trip) must write the same row.
 */
import { type SQL, sql } from 'drizzle-orm';
import type { MessageContentInput } from '../codecs/content.js';
import { type JsonInput, isTruthy } from '../codecs/json.js';
import type { AppendedMessage, Spelling } from '../db/dialect.js';
import { type Op, changes, inserted } from '../db/ops.js';
import { SessionNotFoundError } from '../errors.js';

export interface MessageFields {
  toolName?: string | null;
  toolCalls?: JsonInput | null;
  toolCallId?: string | null;
  tokenCount?: number | null;
  finishReason?: string | null;
  reasoning?: string | null;
  reasoningContent?: string | null;
  reasoningDetails?: JsonInput | null;
  codexReasoningItems?: JsonInput | null;
  codexMessageItems?: JsonInput | null;
}

/** JSON payloads are stored only when truthy (so [] and {} store NULL), as Hermes does. */
export const jsonIfTruthy = (v: JsonInput | null | undefined) => (isTruthy(v) ? v : null);

const INSERT_COLUMNS = sql.raw(
  'session_id, role, tool_call_id, tool_calls, tool_name, timestamp, token_count, finish_reason, reasoning, ' +
    'reasoning_content, reasoning_details, codex_reasoning_items, codex_message_items',
);

/** One row's column list and VALUES tuple; reasoning fields are written only when `withReasoning`. */
export function messageValues(
  d: Spelling,
  sessionId: string,
  role: string,
  content: MessageContentInput | null | undefined,
  f: MessageFields,
  timestamp: number,
  withReasoning: boolean,
): { columns: SQL; values: SQL } {
  const c = d.contentInsert(content);
  const r = withReasoning;
  return {
    columns: sql`${INSERT_COLUMNS}, ${c.columns}`,
    values: sql`(${d.text(sessionId)}, ${d.text(role)}, ${d.freeText(f.toolCallId)}, ${d.json(jsonIfTruthy(f.toolCalls))},
        ${d.freeText(f.toolName)}, ${d.time(timestamp)}, ${d.int(f.tokenCount)}, ${d.freeText(f.finishReason)},
        ${d.freeText(r ? f.reasoning : null)}, ${d.freeText(r ? f.reasoningContent : null)},
        ${d.json(r ? jsonIfTruthy(f.reasoningDetails) : null)}, ${d.json(r ? jsonIfTruthy(f.codexReasoningItems) : null)},
        ${d.json(r ? jsonIfTruthy(f.codexMessageItems) : null)}, ${c.values})`,
  };
}

/** appendMessage as a generic operation: the counter update doubles as the existence check, then the row. */
export function appendMessageOp(d: Spelling, m: AppendedMessage): () => Op<number> {
  const row = messageValues(d, m.sessionId, m.role, m.content, m, m.timestamp, true);
  return function* () {
    // On Postgres the UPDATE also locks the session row until the INSERT commits.
    const touched = yield* changes(sql`
        UPDATE ${d.t.sessions} SET message_count = COALESCE(message_count, 0) + 1,
                            tool_call_count = COALESCE(tool_call_count, 0) + ${d.int(m.toolCallCount)}
        WHERE id = ${d.text(m.sessionId)}`);
    if (touched === 0) throw new SessionNotFoundError(m.sessionId);
    const [id] = yield* inserted(sql`INSERT INTO ${d.t.messages} (${row.columns}) VALUES ${row.values}`);
    return id!;
  };
}
