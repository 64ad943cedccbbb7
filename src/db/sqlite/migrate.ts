/**
 * SQLite migrator: the whole run (check, apply, record, verify) is one `BEGIN IMMEDIATE` transaction, so
 * several processes starting at once serialise on SQLite's write lock and each migration runs exactly once.
 *
 * Foreign keys are switched off around the run (the pragma is ignored inside a transaction, which is how
 * drizzle-kit's table rebuilds fire ON DELETE CASCADE and lose rows), and `PRAGMA foreign_key_check`
 * must come back clean before we commit.
 */
import type { Database } from 'better-sqlite3';
import { MigrationError } from '../../errors.js';
import {
  HISTORY_TABLE,
  LEGACY_HISTORY_TABLE,
  type LegacyRow,
  type MigrationFile,
  type MigrationReport,
  type MigrationStatus,
  assertAllRecorded,
  assertNoUnknownMigrations,
  foreignDatabaseError,
  legacyRowsToMove,
  planMigrations,
  readMigrations,
  statementFailed,
} from '../migrations.js';
import { immediateTransaction, isSqliteBusy, retryWhileBusy } from './busy.js';

/** Where an app whose database already has a "sessions" table keeps the store instead. */
const FOREIGN_DATABASE_ADVICE =
  'An application with its own "sessions" table can keep the store in a database file of its own.';

// Fixed SQL text: the table names are constants. Drizzle's own DDL for the history table, so
// `drizzle-kit migrate` given { migrations: { table: '__hermes_sessiondb_migrations' } } writes compatible rows.
const CREATE_HISTORY = `CREATE TABLE IF NOT EXISTS "${HISTORY_TABLE}" (id SERIAL PRIMARY KEY, hash text NOT NULL, created_at numeric)`;
// Drizzle's SQLite ids are NULL (SERIAL is no rowid alias there): the rowid is the order rows were recorded in.
const SELECT_HISTORY = `SELECT "hash" FROM "${HISTORY_TABLE}" ORDER BY rowid`;
const INSERT_HISTORY = `INSERT INTO "${HISTORY_TABLE}" ("hash", "created_at") VALUES (?, ?)`;
const SELECT_LEGACY = `SELECT rowid AS "key", "hash", "created_at" AS "createdAt" FROM "${LEGACY_HISTORY_TABLE}" ORDER BY rowid`;
const DELETE_LEGACY = `DELETE FROM "${LEGACY_HISTORY_TABLE}" WHERE rowid = ?`;
const DROP_LEGACY = `DROP TABLE "${LEGACY_HISTORY_TABLE}"`;

export interface SqliteMigrateOptions {
  migrationsFolder: string;
  deadlineMs: number;
  where: string;
}

function tableExists(client: Database, name: string): boolean {
  return client.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?").get(name) !== undefined;
}

function recordedHashes(client: Database): string[] {
  if (!tableExists(client, HISTORY_TABLE)) return [];
  return client.prepare(SELECT_HISTORY).pluck().all() as string[];
}

function legacyRows(client: Database): LegacyRow[] {
  if (!tableExists(client, LEGACY_HISTORY_TABLE)) return [];
  return client.prepare(SELECT_LEGACY).all() as LegacyRow[];
}

/**
 * A database migrated by a version up to 0.1.0 keeps our history in Drizzle's shared table: move our rows
 * (known or superseded hashes) into our table once, leave every other app's row where it is, and drop the
 * shared table only when nothing else is left in it. Runs inside the migration's BEGIN IMMEDIATE transaction,
 * and only while our own history is empty.
 */
function moveLegacyHistory(client: Database, local: MigrationFile[]): void {
  if (recordedHashes(client).length > 0) return;
  const rows = legacyRows(client);
  const ours = legacyRowsToMove(local, rows);
  if (ours.length === 0) return;
  client.exec(CREATE_HISTORY);
  const insert = client.prepare(INSERT_HISTORY);
  const remove = client.prepare(DELETE_LEGACY);
  for (const row of ours) {
    insert.run(row.currentHash, row.createdAt);
    remove.run(row.key);
  }
  if (ours.length === rows.length) client.exec(DROP_LEGACY);
}

export async function migrateSqlite(client: Database, options: SqliteMigrateOptions): Promise<MigrationReport> {
  const local = readMigrations(options.migrationsFolder);
  // Fast path without the write lock: an up-to-date database (the common open) needs nothing. The read
  // itself can meet SQLITE_BUSY while another process migrates (no WAL yet on a new file), so it retries.
  // An empty history always takes the lock: a new database, or one whose legacy history is still to be moved.
  const seen = await retryWhileBusy(() => recordedHashes(client), { deadlineMs: options.deadlineMs });
  const current = planMigrations(local, seen);
  if (seen.length > 0 && current.pending.length === 0 && current.unknownHashes.length === 0) {
    return { applied: [], alreadyApplied: local.length, total: local.length };
  }
  client.pragma('foreign_keys = OFF');
  // drizzle-kit rebuilds a table as CREATE __new_x, copy, DROP x, RENAME __new_x TO x. Since SQLite 3.26 the
  // RENAME checks every trigger of the schema, and ours on messages name sessions, which is gone at that
  // moment: the legacy rule renames without that check (the triggers find the new table by its name).
  client.pragma('legacy_alter_table = ON');
  try {
    return await immediateTransaction(
      client,
      () => {
        moveLegacyHistory(client, local);
        const recorded = recordedHashes(client);
        if (recorded.length === 0 && tableExists(client, 'sessions'))
          throw foreignDatabaseError(options.where, FOREIGN_DATABASE_ADVICE);
        const plan = planMigrations(local, recorded);
        assertNoUnknownMigrations(plan, options.where, `"${HISTORY_TABLE}"`);
        client.exec(CREATE_HISTORY);
        const record = client.prepare(INSERT_HISTORY);
        for (const migration of plan.pending) {
          const before = triggerNames(client);
          try {
            for (const statement of migration.statements) client.exec(statement);
          } catch (error) {
            if (isSqliteBusy(error)) throw error;
            throw statementFailed(migration.tag, error);
          }
          assertNoTriggerLost(client, before, migration, options.where);
          record.run(migration.hash, migration.createdAt);
        }
        const violations = client.pragma('foreign_key_check') as unknown[];
        if (violations.length > 0) {
          throw new MigrationError(
            'FOREIGN_KEY_VIOLATION',
            `${options.where}: migrating would leave ${violations.length} row(s) violating a foreign key; rolled back`,
          );
        }
        assertAllRecorded(local, recordedHashes(client), options.where);
        return {
          applied: plan.pending.map((m) => m.tag),
          alreadyApplied: plan.applied.length,
          total: local.length,
        };
      },
      { deadlineMs: options.deadlineMs },
    );
  } finally {
    client.pragma('legacy_alter_table = OFF');
    client.pragma('foreign_keys = ON');
  }
}

const triggerNames = (client: Database): string[] =>
  client.prepare("SELECT name FROM sqlite_master WHERE type = 'trigger'").pluck().all() as string[];

/**
 * A table rebuild drops the table's triggers (ours keep sessions.chain_last_active and the FTS5 indexes right):
 * a migration must name each trigger it means to drop in a DROP TRIGGER, and create again those a rebuild drops.
 */
function assertNoTriggerLost(
  client: Database,
  before: string[],
  migration: { tag: string; statements: string[] },
  where: string,
): void {
  const now = new Set(triggerNames(client));
  const text = migration.statements.join('\n');
  const dropped = (name: string) =>
    new RegExp(
      `DROP\\s+TRIGGER\\s+(IF\\s+EXISTS\\s+)?[\`"]?${name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\b`,
      'i',
    ).test(text);
  const lost = before.filter((name) => !now.has(name) && !dropped(name));
  if (lost.length > 0) {
    throw new MigrationError(
      'TRIGGERS_LOST',
      `${where}: migration ${migration.tag} dropped the trigger(s) ${lost.join(', ')} without a DROP TRIGGER ` +
        '(a table rebuild drops its triggers); rolled back. Create them again in the migration, after the rebuild.',
    );
  }
}

/**
 * What is applied. Read-only: a database whose history still sits in the legacy table (not yet opened with
 * migrations on) reports the migrations recorded there as applied; other apps' rows there are not ours to report.
 */
export function sqliteMigrationStatus(client: Database, migrationsFolder: string): MigrationStatus {
  const local = readMigrations(migrationsFolder);
  let recorded = recordedHashes(client);
  if (recorded.length === 0) recorded = legacyRowsToMove(local, legacyRows(client)).map((r) => r.currentHash);
  const plan = planMigrations(local, recorded);
  return {
    applied: plan.applied.map((m) => m.tag),
    pending: plan.pending.map((m) => m.tag),
    unknownHashes: plan.unknownHashes,
  };
}
