/**
 * The app's own database connection and Drizzle instance. DATABASE_URL is a postgres:// URL, or
 * pglite:<data dir> for embedded Postgres (PGlite), the same forms drizzle.config.ts reads.
 */
import { PGlite } from '@electric-sql/pglite';
import { pg_trgm } from '@electric-sql/pglite/contrib/pg_trgm';
import type { PgDatabase, PgQueryResultHKT } from 'drizzle-orm/pg-core';
import { drizzle as drizzlePglite } from 'drizzle-orm/pglite';
import { migrate as migratePglite } from 'drizzle-orm/pglite/migrator';
import { drizzle as drizzlePostgres } from 'drizzle-orm/postgres-js';
import { migrate as migratePostgres } from 'drizzle-orm/postgres-js/migrator';
import postgres from 'postgres';

/** The app's migrations, written by `npx drizzle-kit generate` (drizzle.config.ts `out`). */
const APP_MIGRATIONS = new URL('../drizzle', import.meta.url).pathname;

export const databaseUrl = (): string => process.env.DATABASE_URL ?? 'pglite:./.data/pglite';

export interface AppDatabase {
  db: PgDatabase<PgQueryResultHKT>;
  /** The driver's client: hand it to openStore so the store shares the app's connection (PGlite must). */
  client: postgres.Sql | PGlite;
  /** Apply the app's own migrations, as `npx drizzle-kit migrate` does (a no-op when it already ran). */
  migrate(): Promise<void>;
  close(): Promise<void>;
}

export async function connect(url: string): Promise<AppDatabase> {
  if (url.startsWith('pglite:')) {
    // One PGlite instance per data directory: the store uses this one. Search needs pg_trgm on it.
    const client = new PGlite(url.slice('pglite:'.length), { extensions: { pg_trgm } });
    const db = drizzlePglite(client);
    return {
      db,
      client,
      migrate: () => migratePglite(db, { migrationsFolder: APP_MIGRATIONS }),
      close: () => client.close(),
    };
  }
  const client = postgres(url, { max: 4, onnotice: () => {} });
  const db = drizzlePostgres(client);
  return {
    db,
    client,
    migrate: () => migratePostgres(db, { migrationsFolder: APP_MIGRATIONS }),
    close: () => client.end({ timeout: 5 }),
  };
}
