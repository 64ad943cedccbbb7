/**
 * drizzle-kit for the app's own tables: `npx drizzle-kit generate | migrate | push`.
 * DATABASE_URL is a postgres:// URL, or pglite:<data dir> for embedded Postgres.
 */
import { defineConfig } from 'drizzle-kit';

const url = process.env.DATABASE_URL ?? 'pglite:./.data/pglite';

export default defineConfig({
  dialect: 'postgresql',
  // The app's tables only. hermes-sessiondb's tables (src/hermes.ts) are never listed here.
  schema: ['./src/schema/notes.ts', './src/schema/auth.ts'],
  out: './drizzle',
  // push/pull look at the app's schema only, never at the store's schema "hermes".
  schemaFilter: ['public'],
  ...(url.startsWith('pglite:')
    ? { driver: 'pglite', dbCredentials: { url: url.slice('pglite:'.length) } }
    : { dbCredentials: { url } }),
  verbose: true,
});
