/**
 * How runtime SQL names our tables and functions. On Postgres every name is qualified with the store's schema
 * (`"hermes"."messages"`; the default layout `"public"."messages"`), so nothing depends on the connection's
 * search_path and an app's own `sessions` in another schema is never touched. SQLite has no schemas: bare names.
 */
import { type SQL, sql } from 'drizzle-orm';
import { z } from 'zod';

/** The schema of the default layout (the tables every store had before the `schema` option). */
export const DEFAULT_SCHEMA = 'public';

/**
 * A schema name for `openStore(url, { schema })`: a plain lower-case identifier (so it needs no quoting rules
 * anyone could get wrong), not a system schema, and not `hermes_sessiondb` (the default layout's migration history).
 */
export const schemaName = z
  .string()
  .regex(
    /^[a-z_][a-z0-9_]{0,62}$/,
    'must be a lower-case identifier: a-z, 0-9 and _, not starting with a digit, at most 63 characters',
  )
  .refine((name) => !name.startsWith('pg_'), 'names starting with pg_ are reserved for system schemas')
  .refine((name) => name !== 'information_schema', 'information_schema is a system schema')
  .refine(
    (name) => name !== 'hermes_sessiondb',
    "hermes_sessiondb is reserved for the default layout's migration history",
  );

/** Our tables, as SQL fragments for FROM / JOIN / INTO / UPDATE. */
export interface TableNames {
  readonly sessions: SQL;
  readonly messages: SQL;
  readonly stateMeta: SQL;
  readonly telegramDmTopicMode: SQL;
  readonly telegramDmTopicBindings: SQL;
  /** Postgres only (the block index, migration 0010); bare names on SQLite, where nothing reads them. */
  readonly messageSearchBlocks: SQL;
  readonly messageSearchRecent: SQL;
  readonly messageSearchRemoved: SQL;
  readonly messageSearchMerged: SQL;
}

/** The Postgres names: the tables, plus the functions runtime SQL calls. */
export interface QualifiedNames extends TableNames {
  readonly schema: string;
  /** `message_search_text(...)` (migration 0002), qualified. */
  searchText(args: SQL): SQL;
  /** A table's qualified name as text (for regclass arguments: pg_get_serial_sequence). */
  qualifiedText(table: string): string;
}

const TABLES = {
  sessions: 'sessions',
  messages: 'messages',
  stateMeta: 'state_meta',
  telegramDmTopicMode: 'telegram_dm_topic_mode',
  telegramDmTopicBindings: 'telegram_dm_topic_bindings',
  messageSearchBlocks: 'message_search_blocks',
  messageSearchRecent: 'message_search_recent',
  messageSearchRemoved: 'message_search_removed',
  messageSearchMerged: 'message_search_merged',
} as const;

/** A quoted Postgres identifier (the schema name is validated, this is belt and braces). */
export const quoteIdent = (name: string): string => `"${name.replace(/"/g, '""')}"`;

/** A schema name as an SQL identifier (CREATE SCHEMA). */
export const quotedSchema = (schema: string): SQL => sql.raw(quoteIdent(schema));

/** A table or function of any schema (an extension's, the migration history's) by its qualified name. */
export const qualifiedName = (schema: string, name: string): SQL =>
  sql.raw(`${quoteIdent(schema)}.${quoteIdent(name)}`);

export function bareTableNames(): TableNames {
  return Object.fromEntries(Object.entries(TABLES).map(([key, name]) => [key, sql.raw(name)])) as unknown as TableNames;
}

export function qualifiedNames(schema: string = DEFAULT_SCHEMA): QualifiedNames {
  const q = (name: string) => `${quoteIdent(schema)}.${quoteIdent(name)}`;
  const tables = Object.fromEntries(
    Object.entries(TABLES).map(([key, name]) => [key, sql.raw(q(name))]),
  ) as unknown as TableNames;
  const searchText = sql.raw(q('message_search_text'));
  return {
    ...tables,
    schema,
    searchText: (args) => sql`${searchText}(${args})`,
    qualifiedText: q,
  };
}
