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
  type MigrationReport,
  type MigrationStatus,
  assertAllRecorded,
  assertNoUnknownMigrations,
  foreignDatabaseError,
  planMigrations,
  readMigrations,
  statementFailed,
} from '../migrations.js';
import { immediateTransaction, isSqliteBusy, retryWhileBusy } from './busy.js';

const MIGRATIONS_TABLE = '__drizzle_migrations';
// Drizzle's own DDL for the table, so drizzle-kit and this migrator share it.
const CREATE_MIGRATIONS_TABLE = `CREATE TABLE IF NOT EXISTS "${MIGRATIONS_TABLE}" (id SERIAL PRIMARY KEY, hash text NOT NULL, created_at numeric)`;

export interface SqliteMigrateOptions {
  migrationsFolder: string;
  deadlineMs: number;
  where: string;
}

function tableExists(client: Database, name: string): boolean {
  return client.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?").get(name) !== undefined;
}

function recordedHashes(client: Database): string[] {
  if (!tableExists(client, MIGRATIONS_TABLE)) return [];
  return client.prepare(`SELECT hash FROM "${MIGRATIONS_TABLE}"`).pluck().all() as string[];
}

export async function migrateSqlite(client: Database, options: SqliteMigrateOptions): Promise<MigrationReport> {
  const local = readMigrations(options.migrationsFolder);
  // Fast path without the write lock: an up-to-date database (the common open) needs nothing. The read
  // itself can meet SQLITE_BUSY while another process migrates (no WAL yet on a new file), so it retries.
  const current = planMigrations(local, await retryWhileBusy(() => recordedHashes(client), { deadlineMs: options.deadlineMs }));
  if (current.pending.length === 0 && current.unknownHashes.length === 0) {
    return { applied: [], alreadyApplied: local.length, total: local.length };
  }
  client.pragma('foreign_keys = OFF');
  try {
    return await immediateTransaction(
      client,
      () => {
        const recorded = recordedHashes(client);
        if (recorded.length === 0 && tableExists(client, 'sessions')) throw foreignDatabaseError(options.where);
        const plan = planMigrations(local, recorded);
        assertNoUnknownMigrations(plan, options.where);
        client.exec(CREATE_MIGRATIONS_TABLE);
        const record = client.prepare(`INSERT INTO "${MIGRATIONS_TABLE}" ("hash", "created_at") VALUES (?, ?)`);
        for (const migration of plan.pending) {
          try {
            for (const statement of migration.statements) client.exec(statement);
          } catch (error) {
            if (isSqliteBusy(error)) throw error;
            throw statementFailed(migration.tag, error);
          }
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
    client.pragma('foreign_keys = ON');
  }
}

export function sqliteMigrationStatus(client: Database, migrationsFolder: string): MigrationStatus {
  const plan = planMigrations(readMigrations(migrationsFolder), recordedHashes(client));
  return {
    applied: plan.applied.map((m) => m.tag),
    pending: plan.pending.map((m) => m.tag),
    unknownHashes: plan.unknownHashes,
  };
}
