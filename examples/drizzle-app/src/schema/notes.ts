/** The app's notes about Hermes sessions: the table the demo joins with hermes-sessiondb's `messages`. */
import { index, pgTable, serial, text, timestamp } from 'drizzle-orm/pg-core';

export const appNotes = pgTable(
  'app_notes',
  {
    id: serial('id').primaryKey(),
    // A Hermes session id. No foreign key: the store's tables may be created before or after the app's.
    hermesSessionId: text('hermes_session_id').notNull(),
    body: text('body').notNull(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [index('app_notes_hermes_session_idx').on(t.hermesSessionId)],
);
