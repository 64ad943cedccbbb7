/**
 * Opening a PostgreSQL store: a postgres.js pool for a server, or PGlite (embedded, WASM) with pg_trgm.
 * Both are reached through Drizzle's PgDatabase, so repositories see one type.
 */
import { PGlite } from '@electric-sql/pglite';
import { pg_trgm } from '@electric-sql/pglite/contrib/pg_trgm';
import { type PgDatabase, type PgQueryResultHKT } from 'drizzle-orm/pg-core';
import { drizzle as drizzlePglite } from 'drizzle-orm/pglite';
import { drizzle as drizzlePostgres } from 'drizzle-orm/postgres-js';
import postgres from 'postgres';
import { ConnectionError } from '../../errors.js';
import * as pgSchema from '../../schema/pg.js';
import { redactUrl } from '../url.js';

export type PgSchema = typeof pgSchema;
export type PgDb = PgDatabase<PgQueryResultHKT, PgSchema>;

export interface OpenedPg {
  db: PgDb;
  close(): Promise<void>;
}

export interface PostgresOpenOptions {
  poolSize: number;
  connectTimeoutSeconds: number;
}

export async function openPostgres(url: string, options: PostgresOpenOptions): Promise<OpenedPg> {
  const where = redactUrl(url);
  const client = postgres(url, {
    max: options.poolSize,
    connect_timeout: options.connectTimeoutSeconds,
    onnotice: () => {}, // "extension already exists, skipping" and friends are not news
    connection: { application_name: 'hermes-sessiondb', TimeZone: 'UTC' },
  });
  try {
    await client`select 1`;
  } catch (error) {
    await client.end({ timeout: 1 }).catch(() => {});
    throw new ConnectionError(where, describePgError(error), { cause: error });
  }
  return {
    db: drizzlePostgres(client, { schema: pgSchema }) as unknown as PgDb,
    close: () => client.end({ timeout: 5 }),
  };
}

export async function openPglite(dataDir: string | null): Promise<OpenedPg> {
  const where = dataDir === null ? 'pglite:memory' : `pglite:${dataDir}`;
  let client: PGlite;
  try {
    client = dataDir === null ? new PGlite({ extensions: { pg_trgm } }) : new PGlite(dataDir, { extensions: { pg_trgm } });
    await client.waitReady;
  } catch (error) {
    throw new ConnectionError(where, describePgError(error), { cause: error });
  }
  return {
    db: drizzlePglite(client, { schema: pgSchema }) as unknown as PgDb,
    close: () => client.close(),
  };
}

function describePgError(error: unknown): string {
  if (error instanceof Error) {
    const code = (error as { code?: unknown }).code;
    return typeof code === 'string' && code !== '' ? `${error.message} (${code})` : error.message;
  }
  return String(error);
}

/** Rows of a raw query, whichever driver ran it (postgres.js returns an array, PGlite `{ rows }`). */
export function rowsOf<T>(result: unknown): T[] {
  if (Array.isArray(result)) return result as T[];
  if (result && typeof result === 'object' && 'rows' in result && Array.isArray(result.rows)) return result.rows as T[];
  throw new TypeError('unexpected query result shape');
}
