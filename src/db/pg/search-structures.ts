/** Postgres' search structures (functions, generated columns, indexes, tables, triggers), and the catalog query. */
import { sql } from 'drizzle-orm';
import { type MissingStructure, expected } from '../search-structures.js';
import { type PgExecutor, rowsOf } from './open.js';

type PgKind = 'extension' | 'function' | 'table' | 'index' | 'column' | 'trigger';

/** The four statement triggers (insert, delete, update, truncate) named `<prefix>_<operation>`. */
const statementTriggers = (prefix: string): Array<[PgKind, string]> =>
  ['insert', 'delete', 'update', 'truncate'].map((op) => ['trigger', `${prefix}_${op}`]);

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
    ...statementTriggers('messages_search_stats'),
  ],
  // 0005's message_search_terms and its triggers are dropped by 0010 (never listed: they were never checked).
  '0010_message_search_blocks': [
    ...['blocks', 'recent', 'removed', 'merged'].map((t): [PgKind, string] => ['table', `message_search_${t}`]),
    ['index', 'idx_message_search_recent_queued'],
    ...['add', 'remove', 'change', 'reset'].map((f): [PgKind, string] => ['function', `message_search_queue_${f}`]),
    ...statementTriggers('messages_search_queue'),
  ],
};

/** What a later migration drops of the structures above. */
const PG_DROPPED: Record<string, ReadonlyArray<[PgKind, string]>> = {
  '0011_drop_replaced_search_structures': [
    ['column', 'search_vector'],
    ['index', 'idx_messages_search_vector'],
    ['index', 'idx_messages_search_trgm'],
    ['function', 'message_word_vector'],
    ['column', 'search_length'],
    ['table', 'message_search_stats'],
    ...statementTriggers('messages_search_stats'),
  ],
};

export async function missingPgSearchStructures(
  db: PgExecutor,
  appliedTags: readonly string[],
  schema = 'public',
): Promise<MissingStructure[]> {
  const wanted = expected(PG_STRUCTURES, appliedTags, PG_DROPPED);
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
