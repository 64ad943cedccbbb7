/**
 * Where a Postgres store keeps its migration history. Our own table, never Drizzle's shared
 * `drizzle.__drizzle_migrations`, so an app's drizzle-kit history and ours do not mix.
 */
import { type SQL, sql } from 'drizzle-orm';
import { HISTORY_TABLE, LEGACY_HISTORY_TABLE } from '../migrations.js';

export interface PgHistoryLocation {
  schema: string;
  table: string;
}

/** The history's schema in the default layout (store tables in `public`): a schema of our own, like Drizzle's `drizzle`. */
export const DEFAULT_HISTORY_SCHEMA = 'hermes_sessiondb';

const isDefaultLayout = (storeSchema: string | undefined) => storeSchema === undefined || storeSchema === 'public';

/** Where the history of a store whose tables live in `storeSchema` is: next to them, or in our own schema by default. */
export function pgHistoryLocation(storeSchema?: string): PgHistoryLocation {
  const schema = storeSchema === undefined || storeSchema === 'public' ? DEFAULT_HISTORY_SCHEMA : storeSchema;
  return { schema, table: HISTORY_TABLE };
}

/**
 * Where versions up to 0.1.0 recorded our migrations (Drizzle's default). Only the default layout existed
 * then, so a store in another schema has no legacy history to move.
 */
export function pgLegacyHistoryLocation(storeSchema?: string): PgHistoryLocation | undefined {
  return isDefaultLayout(storeSchema) ? { schema: 'drizzle', table: LEGACY_HISTORY_TABLE } : undefined;
}

/** The location as a quoted SQL identifier pair. */
export function qualifiedName(location: PgHistoryLocation): SQL {
  return sql`${sql.identifier(location.schema)}.${sql.identifier(location.table)}`;
}

/** The location as people read it in a message. */
export function displayName(location: PgHistoryLocation): string {
  return `"${location.schema}"."${location.table}"`;
}
