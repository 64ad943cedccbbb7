/**
 * What the live database holds: tables, columns, indexes, triggers, FTS tables, extensions. Used by the
 * schema tests on every backend and, later, by the CLI's `verify` and `stats`.
 */
import type { Database } from 'better-sqlite3';
import { sql } from 'drizzle-orm';
import { HISTORY_TABLE, LEGACY_HISTORY_TABLE } from './migrations.js';
import { type PgDb, rowsOf } from './pg/open.js';

export interface ColumnInfo {
  name: string;
  /** The declared type, lower-cased (`text`, `real`, `timestamp with time zone`, `jsonb`, …). */
  type: string;
  notNull: boolean;
  /** The default expression as the database reports it, or null. */
  defaultValue: string | null;
  primaryKey: boolean;
  /** A generated (computed) column. */
  generated: boolean;
}

export interface IndexInfo {
  name: string;
  table: string;
  unique: boolean;
  /** Indexed column names in order; null for an expression. */
  columns: Array<string | null>;
  /** The predicate of a partial index, or null. */
  where: string | null;
}

export interface ForeignKeyInfo {
  table: string;
  columns: string[];
  referencedTable: string;
  referencedColumns: string[];
  /** `NO ACTION`, `CASCADE`, … upper-cased. */
  onDelete: string;
}

export interface SchemaInfo {
  /** Ordinary tables (not migration bookkeeping, ours or Drizzle's, not FTS virtual or shadow tables), by name. */
  tables: Record<string, ColumnInfo[]>;
  indexes: IndexInfo[];
  foreignKeys: ForeignKeyInfo[];
  triggers: Array<{ name: string; table: string }>;
  /** SQLite FTS5 virtual tables with their `USING` clause. */
  virtualTables: Array<{ name: string; using: string }>;
  /** Installed Postgres extensions. */
  extensions: string[];
}

const FTS5_SHADOW = /_(data|idx|content|docsize|config)$/;
const BOOKKEEPING = new Set([HISTORY_TABLE, LEGACY_HISTORY_TABLE]);

export function introspectSqlite(client: Database): SchemaInfo {
  const master = client
    .prepare("SELECT type, name, tbl_name AS tbl, sql FROM sqlite_master WHERE name NOT LIKE 'sqlite_%'")
    .all() as Array<{ type: string; name: string; tbl: string; sql: string | null }>;
  const virtual = master.filter((o) => o.type === 'table' && /^CREATE VIRTUAL TABLE/i.test(o.sql ?? ''));
  const virtualNames = new Set(virtual.map((v) => v.name));
  const isShadow = (name: string) => FTS5_SHADOW.test(name) && virtualNames.has(name.replace(FTS5_SHADOW, ''));

  const info: SchemaInfo = {
    tables: {},
    indexes: [],
    foreignKeys: [],
    triggers: [],
    virtualTables: virtual.map((v) => ({
      name: v.name,
      using: /USING\s+([\s\S]*)$/i.exec(v.sql ?? '')?.[1]?.trim() ?? '',
    })),
    extensions: [],
  };
  for (const o of master) {
    if (o.type === 'trigger') info.triggers.push({ name: o.name, table: o.tbl });
    if (o.type !== 'table' || virtualNames.has(o.name) || isShadow(o.name) || BOOKKEEPING.has(o.name)) continue;
    const columns = client.prepare('SELECT * FROM pragma_table_xinfo(?)').all(o.name) as Array<{
      name: string;
      type: string;
      notnull: number;
      dflt_value: string | null;
      pk: number;
      hidden: number;
    }>;
    info.tables[o.name] = columns.map((c) => ({
      name: c.name,
      type: c.type.toLowerCase(),
      notNull: c.notnull === 1,
      defaultValue: c.dflt_value,
      primaryKey: c.pk > 0,
      generated: c.hidden === 2 || c.hidden === 3,
    }));
    const indexes = client.prepare('SELECT * FROM pragma_index_list(?)').all(o.name) as Array<{
      name: string;
      unique: number;
      origin: string;
      partial: number;
    }>;
    for (const ix of indexes) {
      if (ix.origin !== 'c') continue; // PRIMARY KEY / UNIQUE constraint indexes are not declared indexes
      const cols = client.prepare('SELECT name FROM pragma_index_info(?) ORDER BY seqno').pluck().all(ix.name) as Array<
        string | null
      >;
      const ddl = master.find((m) => m.type === 'index' && m.name === ix.name)?.sql ?? '';
      info.indexes.push({
        name: ix.name,
        table: o.name,
        unique: ix.unique === 1,
        columns: cols,
        where: ix.partial ? (/\bWHERE\b([\s\S]*)$/i.exec(ddl)?.[1]?.trim() ?? null) : null,
      });
    }
    const fks = client.prepare('SELECT * FROM pragma_foreign_key_list(?)').all(o.name) as Array<{
      id: number;
      table: string;
      from: string;
      to: string;
      on_delete: string;
    }>;
    const byId = new Map<number, ForeignKeyInfo>();
    for (const fk of fks) {
      const entry = byId.get(fk.id);
      if (entry) {
        entry.columns.push(fk.from);
        entry.referencedColumns.push(fk.to);
        continue;
      }
      byId.set(fk.id, {
        table: o.name,
        columns: [fk.from],
        referencedTable: fk.table,
        referencedColumns: [fk.to],
        onDelete: fk.on_delete.toUpperCase(),
      });
    }
    info.foreignKeys.push(...byId.values());
  }
  return info;
}

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

/** Something that answers a query with rows (a mysql2 connection). */
export interface MysqlQueryable {
  query(text: string, params?: unknown[]): Promise<[unknown, unknown]>;
}

export async function introspectMysql(c: MysqlQueryable): Promise<SchemaInfo> {
  const read = async <T>(text: string) => (await c.query(text))[0] as T[];
  const str = (v: unknown) =>
    v === null || v === undefined ? null : Buffer.isBuffer(v) ? v.toString('utf8') : String(v);
  const columns = await read<Record<string, unknown>>(
    `SELECT TABLE_NAME AS t, COLUMN_NAME AS c, COLUMN_TYPE AS type, IS_NULLABLE AS nullable, COLUMN_DEFAULT AS def,
            COLUMN_KEY AS k, EXTRA AS extra
     FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = DATABASE() ORDER BY TABLE_NAME, ORDINAL_POSITION`,
  );
  const info: SchemaInfo = {
    tables: {},
    indexes: [],
    foreignKeys: [],
    triggers: [],
    virtualTables: [],
    extensions: [],
  };
  const bookkeeping = (t: string) => BOOKKEEPING.has(t) || t === '__hermes_sessiondb_migration_steps';
  for (const r of columns) {
    const table = str(r.t)!;
    if (bookkeeping(table)) continue;
    info.tables[table] ??= [];
    info.tables[table].push({
      name: str(r.c)!,
      type: str(r.type)!.toLowerCase(),
      notNull: str(r.nullable) === 'NO',
      defaultValue: str(r.def),
      primaryKey: str(r.k) === 'PRI',
      generated: /GENERATED/i.test(str(r.extra) ?? ''),
    });
  }
  const stats = await read<Record<string, unknown>>(
    `SELECT TABLE_NAME AS t, INDEX_NAME AS i, NON_UNIQUE AS nu, COLUMN_NAME AS c
     FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = DATABASE() ORDER BY TABLE_NAME, INDEX_NAME, SEQ_IN_INDEX`,
  );
  const byName = new Map<string, IndexInfo>();
  for (const r of stats) {
    const table = str(r.t)!;
    const name = str(r.i)!;
    if (bookkeeping(table)) continue;
    const key = `${table}.${name}`;
    let index = byName.get(key);
    if (!index) {
      index = { name, table, unique: Number(r.nu) === 0, columns: [], where: null };
      byName.set(key, index);
      info.indexes.push(index);
    }
    index.columns.push(str(r.c));
  }
  const fks = await read<Record<string, unknown>>(
    `SELECT k.TABLE_NAME AS t, k.CONSTRAINT_NAME AS n, k.COLUMN_NAME AS c, k.REFERENCED_TABLE_NAME AS rt,
            k.REFERENCED_COLUMN_NAME AS rc, r.DELETE_RULE AS del
     FROM information_schema.KEY_COLUMN_USAGE k
     JOIN information_schema.REFERENTIAL_CONSTRAINTS r
       ON r.CONSTRAINT_SCHEMA = k.CONSTRAINT_SCHEMA AND r.CONSTRAINT_NAME = k.CONSTRAINT_NAME
     WHERE k.TABLE_SCHEMA = DATABASE() AND k.REFERENCED_TABLE_NAME IS NOT NULL
     ORDER BY k.TABLE_NAME, k.CONSTRAINT_NAME, k.ORDINAL_POSITION`,
  );
  const fkByName = new Map<string, ForeignKeyInfo>();
  for (const r of fks) {
    const key = `${str(r.t)}.${str(r.n)}`;
    let fk = fkByName.get(key);
    if (!fk) {
      fk = {
        table: str(r.t)!,
        columns: [],
        referencedTable: str(r.rt)!,
        referencedColumns: [],
        onDelete: str(r.del)!.toUpperCase(),
      };
      fkByName.set(key, fk);
      info.foreignKeys.push(fk);
    }
    fk.columns.push(str(r.c)!);
    fk.referencedColumns.push(str(r.rc)!);
  }
  const triggers = await read<Record<string, unknown>>(
    'SELECT TRIGGER_NAME AS n, EVENT_OBJECT_TABLE AS t FROM information_schema.TRIGGERS WHERE TRIGGER_SCHEMA = DATABASE() ORDER BY TRIGGER_NAME',
  );
  info.triggers = triggers.map((r) => ({ name: str(r.n)!, table: str(r.t)! }));
  return info;
}
