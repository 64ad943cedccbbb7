/**
 * Migration histories seen from outside the store: ours, Drizzle's shared `__drizzle_migrations` (where
 * version 0.1.0 recorded ours, and where an app's drizzle-kit records its own), and drizzle-orm's own
 * `migrate()` (exactly what `drizzle-kit migrate` runs) to play an app or the old version.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { type SQL, sql } from 'drizzle-orm';
import { migrate as migrateSqliteDb } from 'drizzle-orm/better-sqlite3/migrator';
import type { PgliteDatabase } from 'drizzle-orm/pglite';
import { migrate as migratePglite } from 'drizzle-orm/pglite/migrator';
import type { PostgresJsDatabase } from 'drizzle-orm/postgres-js';
import { migrate as migratePostgresJs } from 'drizzle-orm/postgres-js/migrator';
import type { MysqlBackend, PgBackend, SessionStore, SqliteBackend } from '../../src/index.js';
import { rowsOf } from '../../src/db/pg/open.js';
import { type MigrationDialect, readJournal, shippedFolder } from './migration-folders.js';

export const HISTORY_TABLE = '__hermes_sessiondb_migrations';
export const PG_HISTORY_SCHEMA = 'hermes_sessiondb';

export interface HistoryRow {
  hash: string;
  createdAt: number;
}

/** Run one SQL statement on the store's own connection and return its rows. */
export async function query<T>(store: SessionStore, text: string, params: unknown[] = []): Promise<T[]> {
  if (store.dialect === 'sqlite') {
    const statement = (store.backend as SqliteBackend).client.prepare(text);
    if (statement.reader) return statement.all(...params) as T[];
    statement.run(...params);
    return [];
  }
  if (store.dialect === 'mysql') {
    // The store's connections read "name" as a name (ANSI_QUOTES), as the other dialects do.
    const [rows] = await (store.backend as MysqlBackend).withConnection((c) => c.query(text, params));
    return Array.isArray(rows) ? (rows as T[]) : [];
  }
  const chunks: SQL[] = text
    .split('?')
    .map((part, i) => (i === 0 ? sql.raw(part) : sql`${params[i - 1]}${sql.raw(part)}`));
  return rowsOf<T>(await (store.backend as PgBackend).db.execute(sql.join(chunks)));
}

const tableName = (dialect: SessionStore['dialect'], table: 'ours' | 'legacy') =>
  table === 'ours'
    ? dialect === 'pg'
      ? `"${PG_HISTORY_SCHEMA}"."${HISTORY_TABLE}"`
      : `"${HISTORY_TABLE}"`
    : dialect === 'pg'
      ? '"drizzle"."__drizzle_migrations"'
      : '"__drizzle_migrations"';

async function tableExists(store: SessionStore, table: 'ours' | 'legacy'): Promise<boolean> {
  if (store.dialect === 'mysql') {
    const name = table === 'ours' ? HISTORY_TABLE : '__drizzle_migrations';
    const found = await query(
      store,
      'SELECT 1 FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ?',
      [name],
    );
    return found.length > 0;
  }
  if (store.dialect === 'sqlite') {
    const name = table === 'ours' ? HISTORY_TABLE : '__drizzle_migrations';
    return (await query(store, "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", [name])).length > 0;
  }
  const [schema, name] = table === 'ours' ? [PG_HISTORY_SCHEMA, HISTORY_TABLE] : ['drizzle', '__drizzle_migrations'];
  return (
    (await query(store, 'SELECT 1 FROM pg_catalog.pg_tables WHERE schemaname = ? AND tablename = ?', [schema, name]))
      .length > 0
  );
}

/** The rows of a history table in the order they were recorded, or null when the table does not exist. */
export async function historyRows(store: SessionStore, table: 'ours' | 'legacy'): Promise<HistoryRow[] | null> {
  if (!(await tableExists(store, table))) return null;
  // Drizzle's SQLite ids are NULL: rowid is the recording order there.
  const order = store.dialect === 'sqlite' ? 'rowid' : '"id"';
  const rows = await query<{ hash: string; created_at: string | number }>(
    store,
    `SELECT "hash", "created_at" FROM ${tableName(store.dialect, table)} ORDER BY ${order}`,
  );
  return rows.map((r) => ({ hash: r.hash, createdAt: Number(r.created_at) }));
}

export async function pgSchemaExists(store: SessionStore, schema: string): Promise<boolean> {
  return (await query(store, 'SELECT 1 FROM pg_catalog.pg_namespace WHERE nspname = ?', [schema])).length > 0;
}

export interface DrizzleMigrateConfig {
  migrationsFolder: string;
  migrationsTable?: string;
  migrationsSchema?: string;
}

/** drizzle-orm's own migrate() on the store's connection: what `drizzle-kit migrate` does with this config. */
export async function drizzleMigrate(store: SessionStore, config: DrizzleMigrateConfig): Promise<void> {
  if (store.dialect === 'sqlite') {
    migrateSqliteDb((store.backend as SqliteBackend).db, config);
    return;
  }
  if (store.dialect === 'mysql') {
    // drizzle-orm's MySQL migrator has no schemas: its table lives in the store's database.
    const { migrationsSchema: _, ...mysqlConfig } = config;
    const [{ drizzle: drizzleMysql2 }, { migrate: migrateMysql2 }] = await Promise.all([
      import('drizzle-orm/mysql2'),
      import('drizzle-orm/mysql2/migrator'),
    ]);
    await (store.backend as MysqlBackend).withConnection((c) => migrateMysql2(drizzleMysql2(c), mysqlConfig));
    return;
  }
  const backend = store.backend as PgBackend;
  if (backend.driver === 'pglite') await migratePglite(backend.db as unknown as PgliteDatabase, config);
  else await migratePostgresJs(backend.db as unknown as PostgresJsDatabase, config);
}

const sha256 = (text: string) => crypto.createHash('sha256').update(text).digest('hex');

/** The hash drizzle-orm records for each shipped migration of a folder, in journal order. */
export function folderHashes(folder: string): HistoryRow[] {
  return readJournal(folder).entries.map((e) => ({
    hash: sha256(fs.readFileSync(path.join(folder, `${e.tag}.sql`)).toString()),
    createdAt: e.when,
  }));
}

/** Version 0.1.0's text of drizzle/pg/0001_hermes_v11_tables.sql: its foreign keys named "public"."sessions". */
export function oldPgTablesMigration(): string {
  const current = fs.readFileSync(path.join(shippedFolder('pg'), '0001_hermes_v11_tables.sql'), 'utf8');
  return current.replaceAll('REFERENCES "sessions"', 'REFERENCES "public"."sessions"');
}
export const OLD_PG_TABLES_HASH = sha256(oldPgTablesMigration());

/** The migration folder version 0.1.0 shipped for a dialect (the shipped one, with the old 0001 on Postgres). */
export function oldVersionFolder(dialect: MigrationDialect): string {
  if (dialect === 'mysql') throw new Error('version 0.1.0 had no MySQL engine');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `hsdb-migrations-${dialect}-v010-`));
  fs.cpSync(shippedFolder(dialect), dir, { recursive: true });
  if (dialect === 'pg') fs.writeFileSync(path.join(dir, '0001_hermes_v11_tables.sql'), oldPgTablesMigration());
  return dir;
}

/** A tiny app migration folder as drizzle-kit generates it: a journal and one SQL file. */
export function appFolder(dialect: MigrationDialect, when: number, table = 'app_users'): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `hsdb-app-${dialect}-`));
  fs.mkdirSync(path.join(dir, 'meta'));
  const tag = `0000_${table}`;
  const version = { pg: '7', sqlite: '6', mysql: '5' }[dialect];
  const journal = {
    version,
    dialect: dialect === 'pg' ? 'postgresql' : dialect,
    entries: [{ idx: 0, version, when, tag, breakpoints: true }],
  };
  fs.writeFileSync(path.join(dir, 'meta', '_journal.json'), JSON.stringify(journal, null, 2));
  // drizzle-kit quotes names with backticks for MySQL.
  const q = dialect === 'mysql' ? '`' : '"';
  fs.writeFileSync(
    path.join(dir, `${tag}.sql`),
    `CREATE TABLE ${q}${table}${q} (\n\t${q}id${q} integer PRIMARY KEY NOT NULL,\n\t${q}name${q} text NOT NULL\n);\n`,
  );
  return dir;
}
