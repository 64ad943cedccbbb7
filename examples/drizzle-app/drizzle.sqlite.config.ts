/**
 * drizzle-kit `push` for an app on SQLite sharing the file with a hermes-sessiondb store:
 *   DATABASE_URL=sqlite:./app.db npx drizzle-kit push --config drizzle.sqlite.config.ts
 */
import { defineConfig } from 'drizzle-kit';

const url = process.env.DATABASE_URL ?? 'sqlite:./.data/app.db';
if (!url.startsWith('sqlite:')) throw new Error('drizzle.sqlite.config.ts: set DATABASE_URL to sqlite:<file>');

export default defineConfig({
  dialect: 'sqlite',
  schema: './src/schema/sqlite-notes.ts',
  // Never let push see the store's tables: it would drop the twelve FTS5 tables behind search (messages_fts*),
  // the store's migration history, and rebuild `messages` without its search triggers.
  tablesFilter: [
    '!sessions',
    '!messages',
    '!messages_fts*',
    '!state_meta',
    '!schema_version',
    '!telegram_dm_topic_*',
    '!__hermes_sessiondb_migrations',
  ],
  dbCredentials: { url: url.slice('sqlite:'.length) },
  verbose: true,
});
