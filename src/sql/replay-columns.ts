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

/**
 * Postgres: role and content, then the other replay columns (and content_json) packed into one JSON array, or
 * NULL when all of them are (most messages: plain text without tool calls). postgres.js reads each column of
 * each row separately, so three columns instead of twelve cost it markedly less; text and jsonb values come
 * back from JSON exactly as their own columns give them (jsonb as its JSON text, parsed alike).
 */
export function packedReplayColumnList(alias: string, own: readonly string[]): SQL {
  const rare = [...REPLAY_COLUMNS.slice(2), ...own].map((c) => `${alias}.${c}`);
  return sql.raw(
    `${alias}.${REPLAY_COLUMNS[0]}, ${alias}.${REPLAY_COLUMNS[1]}, ` +
      `CASE WHEN ${rare.map((c) => `${c} IS NULL`).join(' AND ')} THEN NULL ELSE json_build_array(${rare.join(', ')}) END`,
  );
}
