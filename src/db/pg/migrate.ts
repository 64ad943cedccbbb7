/**
 * PostgreSQL migrator: one transaction that first takes a transaction-scoped advisory lock, so concurrent
 * migrators queue up and each migration runs exactly once; DDL is transactional in Postgres, so a failed
 * run leaves nothing behind. The transaction is the write path's (OpenedPg.transaction: a reserved connection
 * with explicit BEGIN/COMMIT on a server, not postgres.js' begin(), which crashes the process when the
 * connection is lost inside it). Works the same on a postgres.js pool and on PGlite.
 */
import { type SQL, sql } from 'drizzle-orm';
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
import { DEFAULT_PG_SCHEMA, quoteIdent, qualifiedName, quotedSchema } from '../../sql/tables.js';

export interface PgMigrateOptions {
  migrationsFolder: string;
  where: string;
  /** The schema the store lives in (default public: the default layout). */
  schema?: string;
}

/**
 * Where the migration history of a store in `schema` lives. The default layout keeps Drizzle's table; a store
 * in its own schema keeps its history next to its tables, so two stores in one database never share one.
 * (The default layout's history moves to hermes_sessiondb.__hermes_sessiondb_migrations in another change.)
 */
function historyTable(schema: string): { schema: string; table: string; sql: SQL } {
  const [historySchema, table] = schema === DEFAULT_PG_SCHEMA ? ['drizzle', '__drizzle_migrations'] : [schema, '__hermes_sessiondb_migrations'];
  return { schema: historySchema, table, sql: qualifiedName(historySchema, table) };
}

/** The advisory lock migrators of one store queue on: per schema (the default layout keeps the key it always had). */
function migrationLockKey(schema: string): string {
  return schema === DEFAULT_PG_SCHEMA ? 'hermes-sessiondb:migrate' : `hermes-sessiondb:migrate:${schema}`;
}

/**
 * The migration files are unqualified: they run with the store's schema first on the search_path (created
 * first unless it is public), followed by the schema holding pg_trgm when that is installed elsewhere (its
 * operator class is named in 0002). A fresh database gets pg_trgm in the store's schema (0000 creates it in
 * the first search_path schema), so nothing is created in public when another schema is asked for.
 */
async function enterStoreSchema(tx: PgExecutor, schema: string): Promise<void> {
  if (schema !== DEFAULT_PG_SCHEMA) await tx.execute(sql`CREATE SCHEMA IF NOT EXISTS ${quotedSchema(schema)}`);
  // Migrators of different schemas hold different locks, but pg_trgm is one per database: two of them creating
  // it at once would fail one on pg_extension's unique index. Taken last, so no two locks are taken in either order.
  await tx.execute(sql`SELECT pg_advisory_xact_lock(hashtext('hermes-sessiondb:extensions'))`);
  const [trgm] = rowsOf<{ schema: string }>(
    await tx.execute(sql`SELECT n.nspname AS schema FROM pg_catalog.pg_extension e
      JOIN pg_catalog.pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'pg_trgm'`),
  );
  const path = [schema, ...(trgm && trgm.schema !== schema ? [trgm.schema] : [])];
  await tx.execute(sql`SELECT pg_catalog.set_config('search_path', ${path.map(quoteIdent).join(', ')}, true)`);
  // A long backfill (postings, rewritten columns) must not be cut by a role's or database's statement_timeout.
  await tx.execute(sql`SELECT pg_catalog.set_config('statement_timeout', '0', true)`);
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

async function recordedHashes(db: PgExecutor, schema: string): Promise<string[]> {
  const history = historyTable(schema);
  if (!(await tableExists(db, history.schema, history.table))) return [];
  return rowsOf<{ hash: string }>(await db.execute(sql`SELECT hash FROM ${history.sql}`)).map((r) => r.hash);
}

export async function migratePg(conn: Pick<OpenedPg, 'db' | 'transaction'>, options: PgMigrateOptions): Promise<MigrationReport> {
  // A lost connection or a failed lock is a DatabaseError; a failed migration statement a MigrationError.
  return runMigrations(conn, options).catch((error: unknown) => {
    throw DatabaseError.from(error);
  });
}

async function runMigrations(conn: Pick<OpenedPg, 'db' | 'transaction'>, options: PgMigrateOptions): Promise<MigrationReport> {
  const local = readMigrations(options.migrationsFolder);
  const schema = options.schema ?? DEFAULT_PG_SCHEMA;
  const history = historyTable(schema);
  // Fast path without the lock: an up-to-date database (the common open) needs nothing.
  const current = planMigrations(local, await recordedHashes(conn.db, schema));
  if (current.pending.length === 0 && current.unknownHashes.length === 0) {
    return { applied: [], alreadyApplied: local.length, total: local.length };
  }
  return conn.transaction(async (tx) => {
    await tx.execute(sql`SELECT pg_advisory_xact_lock(hashtext(${migrationLockKey(schema)}))`);
    const recorded = await recordedHashes(tx, schema);
    if (recorded.length === 0 && (await tableExists(tx, schema, 'sessions'))) throw foreignDatabaseError(options.where);
    const plan = planMigrations(local, recorded);
    assertNoUnknownMigrations(plan, options.where);
    // Drizzle's own DDL for the bookkeeping table, so drizzle-kit and this migrator share it.
    await enterStoreSchema(tx, schema);
    await tx.execute(sql`CREATE SCHEMA IF NOT EXISTS ${quotedSchema(history.schema)}`);
    await tx.execute(
      sql`CREATE TABLE IF NOT EXISTS ${history.sql} (id SERIAL PRIMARY KEY, hash text NOT NULL, created_at bigint)`,
    );
    for (const migration of plan.pending) {
      try {
        for (const statement of migration.statements) await tx.execute(sql.raw(statement));
      } catch (error) {
        throw statementFailed(migration.tag, error);
      }
      await tx.execute(
        sql`INSERT INTO ${history.sql} (hash, created_at) VALUES (${migration.hash}, ${migration.createdAt})`,
      );
    }
    assertAllRecorded(local, await recordedHashes(tx, schema), options.where);
    return { applied: plan.pending.map((m) => m.tag), alreadyApplied: plan.applied.length, total: local.length };
  });
}

export async function pgMigrationStatus(db: PgExecutor, migrationsFolder: string, schema: string = DEFAULT_PG_SCHEMA): Promise<MigrationStatus> {
  const plan = planMigrations(readMigrations(migrationsFolder), await recordedHashes(db, schema));
  return {
    applied: plan.applied.map((m) => m.tag),
    pending: plan.pending.map((m) => m.tag),
    unknownHashes: plan.unknownHashes,
  };
}
