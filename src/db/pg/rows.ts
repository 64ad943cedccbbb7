/**
 * Rows an app selects through its own Drizzle instance from our Postgres tables: camelCase column names,
 * values as the driver gives them (NUL escaped in text and JSON strings, structured content in content_json).
 * These give exactly what the store's reads give.
 */
import type * as tables from '../../schema/pg.js';
import { byColumnName, decodeBinding, decodeMessage, decodeSession } from '../../repos/rows.js';
import type { MessageRow, SessionRow, TelegramTopicBinding } from '../../types.js';
import { pgValueDecoders } from './spelling.js';

/** A sessions row as an app's Drizzle instance selects it from our Postgres tables. */
export type PgSessionsSelect = typeof tables.sessions.$inferSelect;
/** A messages row as an app's Drizzle instance selects it from our Postgres tables. */
export type PgMessagesSelect = typeof tables.messages.$inferSelect;
export type PgTopicBindingsSelect = typeof tables.telegramDmTopicBindings.$inferSelect;

/** A full `sessions` row selected with Drizzle from our Postgres tables, as `store.getSession` returns it. */
export function decodePgSessionRow(row: PgSessionsSelect): SessionRow {
  return decodeSession(byColumnName(row), pgValueDecoders);
}

/**
 * A full `messages` row selected with Drizzle from our Postgres tables, as `store.getMessages` returns it.
 * JSON values are decoded in place (only when they hold an escaped NUL).
 */
export function decodePgMessageRow(row: PgMessagesSelect): MessageRow {
  return decodeMessage(byColumnName(row), pgValueDecoders);
}

/** A `telegram_dm_topic_bindings` row from our Postgres tables, as `store.getTelegramTopicBinding` returns it. */
export function decodePgTelegramBindingRow(row: PgTopicBindingsSelect): TelegramTopicBinding {
  return decodeBinding(byColumnName(row), pgValueDecoders);
}
