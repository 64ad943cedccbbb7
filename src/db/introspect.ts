/**
 * What the live database holds: tables, columns, indexes, triggers, FTS tables, extensions. Used by the
 * schema tests on every backend and, later, by the CLI's `verify` and `stats`. Each engine reads its own
 * catalog (src/db/<engine>/introspect.ts) into these shapes.
 */
import { HISTORY_TABLE, LEGACY_HISTORY_TABLE } from './migrations.js';

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

/** Our migration history tables (current and legacy names): bookkeeping, never listed among the tables. */
export const BOOKKEEPING = new Set([HISTORY_TABLE, LEGACY_HISTORY_TABLE]);
