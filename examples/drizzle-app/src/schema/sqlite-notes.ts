/** The notes table for an app on SQLite, next to a hermes-sessiondb SQLite store in the same file. */
import { index, integer, sqliteTable, text } from 'drizzle-orm/sqlite-core';

export const appNotes = sqliteTable(
  'app_notes',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    hermesSessionId: text('hermes_session_id').notNull(),
    body: text('body').notNull(),
  },
  (t) => [index('app_notes_hermes_session_idx').on(t.hermesSessionId)],
);
