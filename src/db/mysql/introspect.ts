/** MySQL/MariaDB's information_schema for the connection's database as a SchemaInfo. */
import { BOOKKEEPING, type ForeignKeyInfo, type IndexInfo, type SchemaInfo } from '../introspect.js';

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
