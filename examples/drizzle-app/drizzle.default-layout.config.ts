/**
 * drizzle-kit `push` for an app that hosts hermes-sessiondb in its default layout (tables in `public`):
 * `npx drizzle-kit push --config drizzle.default-layout.config.ts`.
 * In that layout no app table may share a name with ours, so this config lists the notes table only.
 */
import { defineConfig } from 'drizzle-kit';

const url = process.env.DATABASE_URL ?? 'pglite:./.data/pglite';

export default defineConfig({
  dialect: 'postgresql',
  schema: './src/schema/notes.ts',
  out: './drizzle',
  // Never let push see hermes-sessiondb's tables: it would drop their search column and indexes (created by
  // custom SQL it does not know) or the tables themselves. The store's migration history lives in schema
  // hermes_sessiondb, outside the default schemaFilter (public).
  tablesFilter: ['!sessions', '!messages', '!state_meta', '!telegram_dm_topic_*', '!message_search_*'],
  ...(url.startsWith('pglite:')
    ? { driver: 'pglite', dbCredentials: { url: url.slice('pglite:'.length) } }
    : { dbCredentials: { url } }),
  verbose: true,
});
