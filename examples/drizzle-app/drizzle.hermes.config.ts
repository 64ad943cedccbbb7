/**
 * Apply hermes-sessiondb's own migrations with drizzle-kit instead of letting openStore do it:
 *   npx drizzle-kit migrate --config drizzle.hermes.config.ts
 * For the default layout (tables in `public`) on a Postgres server. The store records the same history rows
 * in the same table, so openStore then finds nothing pending. (PGlite: drizzle-kit's PGlite has no pg_trgm,
 * which the first migration needs; let openStore migrate there.)
 */
import { defineConfig } from 'drizzle-kit';
import { migrationsFolder } from 'hermes-sessiondb';

const url = process.env.DATABASE_URL ?? '';
if (!url.startsWith('postgres')) throw new Error('drizzle.hermes.config.ts: set DATABASE_URL to a postgres:// URL');

export default defineConfig({
  dialect: 'postgresql',
  // The SQL files shipped in the installed package (node_modules/hermes-sessiondb/drizzle/pg).
  out: migrationsFolder('pg'),
  // The store's own history table, never the app's drizzle.__drizzle_migrations.
  migrations: { table: '__hermes_sessiondb_migrations', schema: 'hermes_sessiondb' },
  dbCredentials: { url },
});
