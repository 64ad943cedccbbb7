/**
 * hermes-sessiondb's tables, for the app's own Drizzle queries (joins, reports). This module is deliberately
 * NOT listed in drizzle.config.ts `schema`: the store creates and migrates its tables itself, so drizzle-kit
 * must neither generate migrations for them nor `push` them (push would drop the search column and indexes
 * it does not know about).
 */
import { hermesPgTables } from 'hermes-sessiondb/schema/pg';

/** The Postgres schema the store lives in: `openStore(url, { schema: HERMES_SCHEMA })`. */
export const HERMES_SCHEMA = 'hermes';

export const hermes = hermesPgTables(HERMES_SCHEMA);
