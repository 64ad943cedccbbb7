/**
 * The columns a conversation replay reads, as Hermes' get_messages_as_conversation selects them: no id,
 * session, time or token count, which the replay never shows (on Postgres the time is also the costliest
 * column to print and to parse). rows.ts decodeReplayValues reads them by position.
 */
import { type SQL, sql } from 'drizzle-orm';

export const REPLAY_COLUMNS = [
  'role',
  'content',
  'tool_call_id',
  'tool_calls',
  'tool_name',
  'finish_reason',
  'reasoning',
  'reasoning_content',
  'reasoning_details',
  'codex_reasoning_items',
  'codex_message_items',
] as const;

/** REPLAY_COLUMNS of the messages row alias `alias`, then the dialect's own (Postgres: content_json). */
export function replayColumnList(alias: string, own: readonly string[] = []): SQL {
  return sql.raw([...REPLAY_COLUMNS, ...own].map((c) => `${alias}.${c}`).join(', '));
}
