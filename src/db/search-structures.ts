/**
 * The search structures our migrations create and `drizzle-kit push` drops when our tables are not excluded
 * (it removes what the app's schema does not declare: FTS5 tables, triggers, generated columns, GIN indexes).
 * Opening looks for them with one catalog query, so a store says what is missing instead of failing its first
 * search. Each object is listed under the migration that creates it: only the migrations recorded in the
 * database are expected (an older store, or a test's partial migration folder, is not reported).
 */
import { sql } from 'drizzle-orm';
import type Database from 'better-sqlite3';
import { MigrationError } from '../errors.js';
import type { PgExecutor } from './pg/open.js';
import { rowsOf } from './pg/open.js';

type SqliteKind = 'table' | 'trigger';
type PgKind = 'extension' | 'function' | 'table' | 'index' | 'column' | 'trigger';

export interface MissingStructure {
  kind: string;
  name: string;
}

const SQLITE_STRUCTURES: Record<string, ReadonlyArray<[SqliteKind, string]>> = {
  '0002_fts5_search': [
    ['table', 'messages_fts'],
    ['table', 'messages_fts_trigram'],
    ...['insert', 'delete', 'update'].flatMap(
      (op): Array<[SqliteKind, string]> => [
        ['trigger', `messages_fts_${op}`],
        ['trigger', `messages_fts_trigram_${op}`],
      ],
    ),
  ],
};

/** Columns and triggers are those of the messages table. */
const PG_STRUCTURES: Record<string, ReadonlyArray<[PgKind, string]>> = {
  '0000_pg_trgm_extension': [['extension', 'pg_trgm']],
  '0002_message_search': [
    ['function', 'message_search_text'],
    ['column', 'search_vector'],
    ['index', 'idx_messages_search_vector'],
    ['index', 'idx_messages_search_trgm'],
  ],
  '0004_bounded_search_vector': [
    ['function', 'message_word_window'],
    ['function', 'message_word_vector'],
    ['function', 'message_cjk_grams'],
    ['column', 'search_length'],
    ['column', 'search_cjk'],
    ['index', 'idx_messages_search_cjk'],
    ['table', 'message_search_stats'],
    ...['insert', 'delete', 'update', 'truncate'].map((op): [PgKind, string] => [
      'trigger',
      `messages_search_stats_${op}`,
    ]),
  ],
  '0005_message_search_terms': [
    ['table', 'message_search_terms'],
    ...['insert', 'delete', 'update', 'truncate'].map((op): [PgKind, string] => [
      'trigger',
      `messages_search_terms_${op}`,
    ]),
  ],
};

function expected<K>(structures: Record<string, ReadonlyArray<[K, string]>>, appliedTags: readonly string[]) {
  return appliedTags.flatMap((tag) => structures[tag] ?? []).map(([kind, name]) => ({ kind, name }));
}

export function missingSqliteSearchStructures(
  client: Database.Database,
  appliedTags: readonly string[],
): MissingStructure[] {
  const wanted = expected(SQLITE_STRUCTURES, appliedTags);
  if (wanted.length === 0) return [];
  const present = new Set(
    (
      client
        .prepare(`SELECT type || ' ' || name AS object FROM sqlite_master WHERE type IN ('table', 'trigger')`)
        .all() as Array<{ object: string }>
    ).map((r) => r.object),
  );
  return wanted.filter((w) => !present.has(`${w.kind} ${w.name}`));
}

export async function missingPgSearchStructures(
  db: PgExecutor,
  appliedTags: readonly string[],
  schema = 'public',
): Promise<MissingStructure[]> {
  const wanted = expected(PG_STRUCTURES, appliedTags);
  if (wanted.length === 0) return [];
  const rows = rowsOf<MissingStructure>(
    await db.execute(sql`
      WITH ns AS (SELECT oid FROM pg_catalog.pg_namespace WHERE nspname = ${schema}),
      messages AS (SELECT c.oid FROM pg_catalog.pg_class c WHERE c.relname = 'messages' AND c.relnamespace IN (SELECT oid FROM ns))
      SELECT w.kind, w.name FROM json_to_recordset(${JSON.stringify(wanted)}::json) AS w(kind text, name text)
      WHERE NOT CASE w.kind
        WHEN 'extension' THEN EXISTS (SELECT 1 FROM pg_catalog.pg_extension e WHERE e.extname = w.name)
        WHEN 'function' THEN EXISTS (SELECT 1 FROM pg_catalog.pg_proc p WHERE p.proname = w.name AND p.pronamespace IN (SELECT oid FROM ns))
        WHEN 'table' THEN EXISTS (SELECT 1 FROM pg_catalog.pg_class c WHERE c.relname = w.name AND c.relkind IN ('r', 'p') AND c.relnamespace IN (SELECT oid FROM ns))
        WHEN 'index' THEN EXISTS (SELECT 1 FROM pg_catalog.pg_class c WHERE c.relname = w.name AND c.relkind = 'i' AND c.relnamespace IN (SELECT oid FROM ns))
        WHEN 'column' THEN EXISTS (SELECT 1 FROM pg_catalog.pg_attribute a WHERE a.attrelid IN (SELECT oid FROM messages) AND a.attname = w.name AND NOT a.attisdropped)
        WHEN 'trigger' THEN EXISTS (SELECT 1 FROM pg_catalog.pg_trigger t WHERE t.tgrelid IN (SELECT oid FROM messages) AND t.tgname = w.name)
        ELSE false END`),
  );
  // In the order they are listed, whatever order the server returns them in.
  const missing = new Set(rows.map((r) => `${r.kind} ${r.name}`));
  return wanted.filter((w) => missing.has(`${w.kind} ${w.name}`));
}

/** The MigrationError for a store whose migration history records search structures that are not there. */
export function missingSearchStructuresError(
  where: string,
  pushDrops: string,
  missing: readonly MissingStructure[],
): MigrationError {
  const list = missing.map(
    (m) => `${m.kind === 'column' || m.kind === 'trigger' ? `${m.kind} messages.` : `${m.kind} `}${m.name}`,
  );
  return new MigrationError(
    'MISSING_SEARCH_STRUCTURES',
    `${where}: search structures that its recorded migrations created are missing: ${list.join(', ')}. ` +
      'They are usually dropped by `drizzle-kit push` run without a tablesFilter that leaves our tables alone ' +
      `(push removes what the app's schema does not declare: ${pushDrops}; ` +
      "see docs/drizzle-app.md in the package's repository for the filter). Search would fail or miss " +
      'messages. To restore them, copy the sessions into a fresh store, whose migrations create them: open this one with ' +
      '{ migrate: false, allowMissingSearchStructures: true } and copyStore() it into the new one ' +
      '(or restore a backup taken before the push).',
  );
}
