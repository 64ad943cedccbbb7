/**
 * The app's login sessions, in `public` under the same name as hermes-sessiondb's `sessions`: no clash,
 * because the store lives in its own Postgres schema (`openStore(url, { schema: 'hermes' })`).
 */
import { pgTable, text, timestamp } from 'drizzle-orm/pg-core';

export const sessions = pgTable('sessions', {
  id: text('id').primaryKey(),
  userName: text('user_name').notNull(),
  expiresAt: timestamp('expires_at', { withTimezone: true }).notNull(),
});
