/** SQLite's catalog (sqlite_master and the table pragmas) as a SchemaInfo. */
import type { Database } from 'better-sqlite3';
import { BOOKKEEPING, type ForeignKeyInfo, type SchemaInfo } from '../introspect.js';

const FTS5_SHADOW = /_(data|idx|content|docsize|config)$/;

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
