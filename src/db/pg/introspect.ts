/** Postgres' catalog (information_schema and pg_catalog) for one schema as a SchemaInfo. */
import { sql } from 'drizzle-orm';
import type { SchemaInfo } from '../introspect.js';
import { type PgDb, rowsOf } from './open.js';

/** The store in `schema` (default public); the migration history table is not one of its tables. */
export async function introspectPg(db: PgDb, schema = 'public'): Promise<SchemaInfo> {
  const columns = rowsOf<{
    table_name: string;
    column_name: string;
    data_type: string;
    is_nullable: string;
    column_default: string | null;
    is_generated: string;
    is_pk: boolean;
  }>(
    await db.execute(sql`
      SELECT c.table_name, c.column_name, c.data_type, c.is_nullable, c.column_default, c.is_generated,
             EXISTS (
               SELECT 1 FROM information_schema.table_constraints tc
               JOIN information_schema.key_column_usage k
                 ON k.constraint_name = tc.constraint_name AND k.table_schema = tc.table_schema
               WHERE tc.constraint_type = 'PRIMARY KEY' AND tc.table_schema = c.table_schema
                 AND tc.table_name = c.table_name AND k.column_name = c.column_name
             ) AS is_pk
      FROM information_schema.columns c
      JOIN information_schema.tables t ON t.table_schema = c.table_schema AND t.table_name = c.table_name
      WHERE c.table_schema = ${schema} AND t.table_type = 'BASE TABLE' AND c.table_name <> '__hermes_sessiondb_migrations'
      ORDER BY c.table_name, c.ordinal_position`),
  );
  const indexes = rowsOf<{
    name: string;
    table: string;
    unique: boolean;
    columns: Array<string | null>;
    where: string | null;
  }>(
    await db.execute(sql`
      SELECT i.relname AS name, t.relname AS "table", ix.indisunique AS "unique",
             pg_get_expr(ix.indpred, ix.indrelid) AS "where",
             ARRAY(
               SELECT COALESCE(a.attname::text, '') FROM unnest(ix.indkey::int2[]) WITH ORDINALITY AS k(attnum, ord)
               LEFT JOIN pg_attribute a ON a.attrelid = t.oid AND a.attnum = k.attnum AND k.attnum <> 0
               ORDER BY k.ord
             ) AS columns
      FROM pg_index ix
      JOIN pg_class i ON i.oid = ix.indexrelid
      JOIN pg_class t ON t.oid = ix.indrelid
      JOIN pg_namespace n ON n.oid = t.relnamespace
      WHERE n.nspname = ${schema} AND NOT ix.indisprimary
        AND NOT EXISTS (SELECT 1 FROM pg_constraint con WHERE con.conindid = ix.indexrelid)
      ORDER BY i.relname`),
  );
  const foreignKeys = rowsOf<{
    table: string;
    columns: string[];
    referenced_table: string;
    referenced_columns: string[];
    on_delete: string;
  }>(
    await db.execute(sql`
      SELECT cl.relname AS "table", rt.relname AS referenced_table,
             ARRAY(SELECT a.attname::text FROM unnest(con.conkey) WITH ORDINALITY k(n, o)
                   JOIN pg_attribute a ON a.attrelid = con.conrelid AND a.attnum = k.n ORDER BY k.o) AS columns,
             ARRAY(SELECT a.attname::text FROM unnest(con.confkey) WITH ORDINALITY k(n, o)
                   JOIN pg_attribute a ON a.attrelid = con.confrelid AND a.attnum = k.n ORDER BY k.o) AS referenced_columns,
             CASE con.confdeltype WHEN 'a' THEN 'NO ACTION' WHEN 'r' THEN 'RESTRICT' WHEN 'c' THEN 'CASCADE'
                  WHEN 'n' THEN 'SET NULL' WHEN 'd' THEN 'SET DEFAULT' END AS on_delete
      FROM pg_constraint con
      JOIN pg_class cl ON cl.oid = con.conrelid
      JOIN pg_class rt ON rt.oid = con.confrelid
      JOIN pg_namespace n ON n.oid = cl.relnamespace
      WHERE con.contype = 'f' AND n.nspname = ${schema}`),
  );
  const triggers = rowsOf<{ name: string; table: string }>(
    await db.execute(sql`
      SELECT tg.tgname AS name, c.relname AS "table" FROM pg_trigger tg
      JOIN pg_class c ON c.oid = tg.tgrelid JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE n.nspname = ${schema} AND NOT tg.tgisinternal`),
  );
  const extensions = rowsOf<{ extname: string }>(await db.execute(sql`SELECT extname FROM pg_extension`));

  const tables: SchemaInfo['tables'] = {};
  for (const c of columns) {
    tables[c.table_name] ??= [];
    tables[c.table_name]!.push({
      name: c.column_name,
      type: c.data_type.toLowerCase(),
      notNull: c.is_nullable === 'NO',
      defaultValue: c.column_default,
      primaryKey: c.is_pk,
      generated: c.is_generated === 'ALWAYS',
    });
  }
  return {
    tables,
    // '' marks an expression column (drivers disagree on how they parse a NULL array element).
    indexes: indexes.map((ix) => ({ ...ix, columns: ix.columns.map((c) => (c === '' ? null : c)) })),
    foreignKeys: foreignKeys.map((fk) => ({
      table: fk.table,
      columns: [...fk.columns],
      referencedTable: fk.referenced_table,
      referencedColumns: [...fk.referenced_columns],
      onDelete: fk.on_delete,
    })),
    triggers,
    virtualTables: [],
    extensions: extensions.map((e) => e.extname),
  };
}
