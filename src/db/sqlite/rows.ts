/**
 * Rows an app selects through its own Drizzle instance from our SQLite tables: camelCase column names,
 * values as the driver gives them (JSON as text, structured content behind the "\x00json:" marker).
 * These give exactly what the store's reads give.
 */
import type * as tables from '../../schema/sqlite.js';
import { byColumnName, decodeBinding, decodeMessage, decodeSession } from '../../repos/rows.js';
import type { MessageRow, SessionRow, TelegramTopicBinding } from '../../types.js';
import { sqliteValueDecoders } from './spelling.js';

/** A sessions row as an app's Drizzle instance selects it from our SQLite tables. */
export type SqliteSessionsSelect = typeof tables.sessions.$inferSelect;
/** A messages row as an app's Drizzle instance selects it from our SQLite tables. */
export type SqliteMessagesSelect = typeof tables.messages.$inferSelect;
export type SqliteTopicBindingsSelect = typeof tables.telegramDmTopicBindings.$inferSelect;

/** A full `sessions` row selected with Drizzle from our SQLite tables, as `store.getSession` returns it. */
export function decodeSqliteSessionRow(row: SqliteSessionsSelect): SessionRow {
  return decodeSession(byColumnName(row), sqliteValueDecoders);
}

/** A full `messages` row selected with Drizzle from our SQLite tables, as `store.getMessages` returns it. */
export function decodeSqliteMessageRow(row: SqliteMessagesSelect): MessageRow {
  return decodeMessage(byColumnName(row), sqliteValueDecoders);
}

/** A `telegram_dm_topic_bindings` row from our SQLite tables, as `store.getTelegramTopicBinding` returns it. */
export function decodeSqliteTelegramBindingRow(row: SqliteTopicBindingsSelect): TelegramTopicBinding {
  return decodeBinding(byColumnName(row), sqliteValueDecoders);
}
