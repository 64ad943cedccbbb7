/**
 * The messages columns every message read selects, in this order (rows.ts messageRowFromValues reads them by
 * position): Hermes' v11 messages table. A dialect's own columns (Postgres: content_json) come after them.
 */
import { type SQL, sql } from 'drizzle-orm';

export const MESSAGE_COLUMNS = [
  'id',
  'session_id',
  'role',
  'content',
  'tool_call_id',
  'tool_calls',
  'tool_name',
  'timestamp',
  'token_count',
  'finish_reason',
  'reasoning',
  'reasoning_content',
  'reasoning_details',
  'codex_reasoning_items',
  'codex_message_items',
] as const;

/** MESSAGE_COLUMNS of the messages row alias `alias`, then the dialect's own. */
export function messageColumnList(alias: string, own: readonly string[] = []): SQL {
  return sql.raw([...MESSAGE_COLUMNS, ...own].map((c) => `${alias}.${c}`).join(', '));
}
