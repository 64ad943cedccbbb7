/**
 * PostgreSQL migrator: one transaction that first takes a transaction-scoped advisory lock, so concurrent
 * migrators queue up and each migration runs exactly once; DDL is transactional in Postgres, so a failed
 * run leaves nothing behind. The transaction is the write path's (OpenedPg.transaction: a reserved connection
 * with explicit BEGIN/COMMIT on a server, not postgres.js' begin(), which crashes the process when the
 * connection is lost inside it). Works the same on a postgres.js pool and on PGlite.
 */
import { sql } from 'drizzle-orm';
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
import { DatabaseError } from '../../errors.js';
import { type OpenedPg, type PgExecutor, rowsOf } from './open.js';

export interface PgMigrateOptions {
  migrationsFolder: string;
  where: string;
}

/**
 * Whether a table exists, read from pg_class under the statement's snapshot. Not to_regclass(): it resolves
 * names through the backend's catalog cache, which takes no lock and so may not have seen another
 * session's just-committed CREATE (found by the concurrent-migration test: a migrator that waited on the
 * advisory lock still saw "no migrations table" while the tables were there).
 */
async function tableExists(db: PgExecutor, schema: string, table: string): Promise<boolean> {
  const [row] = rowsOf<{ exists: boolean }>(
    await db.execute(sql`SELECT EXISTS (
      SELECT 1 FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
      WHERE n.nspname = ${schema} AND c.relname = ${table}) AS "exists"`),
  );
  return row?.exists === true;
}

async function recordedHashes(db: PgExecutor): Promise<string[]> {
  if (!(await tableExists(db, 'drizzle', '__drizzle_migrations'))) return [];
  return rowsOf<{ hash: string }>(await db.execute(sql`SELECT hash FROM drizzle.__drizzle_migrations`)).map(
    (r) => r.hash,
  );
}

export async function migratePg(conn: Pick<OpenedPg, 'db' | 'transaction'>, options: PgMigrateOptions): Promise<MigrationReport> {
  // A lost connection or a failed lock is a DatabaseError; a failed migration statement a MigrationError.
  return runMigrations(conn, options).catch((error: unknown) => {
    throw DatabaseError.from(error);
  });
}

async function runMigrations(conn: Pick<OpenedPg, 'db' | 'transaction'>, options: PgMigrateOptions): Promise<MigrationReport> {
  const local = readMigrations(options.migrationsFolder);
  // Fast path without the lock: an up-to-date database (the common open) needs nothing.
  const current = planMigrations(local, await recordedHashes(conn.db));
  if (current.pending.length === 0 && current.unknownHashes.length === 0) {
    return { applied: [], alreadyApplied: local.length, total: local.length };
  }
  return conn.transaction(async (tx) => {
    await tx.execute(sql`SELECT pg_advisory_xact_lock(hashtext('hermes-sessiondb:migrate'))`);
    const recorded = await recordedHashes(tx);
    if (recorded.length === 0 && (await tableExists(tx, 'public', 'sessions'))) throw foreignDatabaseError(options.where);
    const plan = planMigrations(local, recorded);
    assertNoUnknownMigrations(plan, options.where);
    // Drizzle's own DDL for the bookkeeping table, so drizzle-kit and this migrator share it.
    await tx.execute(sql`CREATE SCHEMA IF NOT EXISTS drizzle`);
    await tx.execute(
      sql`CREATE TABLE IF NOT EXISTS drizzle.__drizzle_migrations (id SERIAL PRIMARY KEY, hash text NOT NULL, created_at bigint)`,
    );
    for (const migration of plan.pending) {
      try {
        for (const statement of migration.statements) await tx.execute(sql.raw(statement));
      } catch (error) {
        throw statementFailed(migration.tag, error);
      }
      await tx.execute(
        sql`INSERT INTO drizzle.__drizzle_migrations (hash, created_at) VALUES (${migration.hash}, ${migration.createdAt})`,
      );
    }
    assertAllRecorded(local, await recordedHashes(tx), options.where);
    return { applied: plan.pending.map((m) => m.tag), alreadyApplied: plan.applied.length, total: local.length };
  });
}

export async function pgMigrationStatus(db: PgExecutor, migrationsFolder: string): Promise<MigrationStatus> {
  const plan = planMigrations(readMigrations(migrationsFolder), await recordedHashes(db));
  return {
    applied: plan.applied.map((m) => m.tag),
    pending: plan.pending.map((m) => m.tag),
    unknownHashes: plan.unknownHashes,
  };
}
