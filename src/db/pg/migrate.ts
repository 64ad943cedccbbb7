/**
 * PostgreSQL migrator: one transaction that first takes a transaction-scoped advisory lock, so concurrent
 * migrators queue up and each migration runs exactly once; DDL is transactional in Postgres, so a failed
 * run leaves nothing behind. The transaction is the write path's (OpenedPg.transaction: a reserved connection
 * with explicit BEGIN/COMMIT on a server, not postgres.js' begin(), which crashes the process when the
 * connection is lost inside it). Works the same on a postgres.js pool and on PGlite.
 */
import { sql } from 'drizzle-orm';
import {
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
import { DatabaseError } from '../../errors.js';
import {
  type PgHistoryLocation,
  displayName,
  pgHistoryLocation,
  pgLegacyHistoryLocation,
  qualifiedName,
} from './history.js';
import { type OpenedPg, type PgExecutor, rowsOf } from './open.js';
import { DEFAULT_SCHEMA, quoteIdent, quotedSchema } from '../../sql/tables.js';

/** Where an app whose database already has a "sessions" table keeps the store instead. */
const FOREIGN_DATABASE_ADVICE =
  'An application with its own "sessions" table can host the store in another Postgres schema ' +
  "(openStore option { schema: 'hermes' }).";

export interface PgMigrateOptions {
  migrationsFolder: string;
  where: string;
  /** The schema the store lives in (default public: the default layout). */
  schema?: string;
}

/** The advisory lock migrators of one store queue on: per schema (the default layout keeps the key it always had). */
function migrationLockKey(schema: string): string {
  return schema === DEFAULT_SCHEMA ? 'hermes-sessiondb:migrate' : `hermes-sessiondb:migrate:${schema}`;
}

/**
 * The migration files are unqualified: they run with the store's schema first on the search_path (created
 * first unless it is public), followed by the schema holding pg_trgm when that is installed elsewhere (its
 * operator class is named in 0002). A fresh database gets pg_trgm in the store's schema (0000 creates it in
 * the first search_path schema), so nothing is created in public when another schema is asked for.
 */
async function enterStoreSchema(tx: PgExecutor, schema: string): Promise<void> {
  if (schema !== DEFAULT_SCHEMA) await tx.execute(sql`CREATE SCHEMA IF NOT EXISTS ${quotedSchema(schema)}`);
  // Migrators of different schemas hold different locks, but pg_trgm is one per database: two of them creating
  // it at once would fail one on pg_extension's unique index. Taken last, so no two locks are taken in either order.
  await tx.execute(sql`SELECT pg_advisory_xact_lock(hashtext('hermes-sessiondb:extensions'))`);
  const [trgm] = rowsOf<{ schema: string }>(
    await tx.execute(sql`SELECT n.nspname AS schema FROM pg_catalog.pg_extension e
      JOIN pg_catalog.pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'pg_trgm'`),
  );
  const path = [schema, ...(trgm && trgm.schema !== schema ? [trgm.schema] : [])];
  await tx.execute(sql`SELECT pg_catalog.set_config('search_path', ${path.map(quoteIdent).join(', ')}, true)`);
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

/** Hashes in our history, in the order they were recorded. */
async function recordedHashes(db: PgExecutor, history: PgHistoryLocation): Promise<string[]> {
  if (!(await tableExists(db, history.schema, history.table))) return [];
  return rowsOf<{ hash: string }>(
    await db.execute(sql`SELECT "hash" FROM ${qualifiedName(history)} ORDER BY "id"`),
  ).map((r) => r.hash);
}

/** Drizzle's own DDL for the history table, so `drizzle-kit migrate` pointed at it writes compatible rows. */
async function createHistory(tx: PgExecutor, history: PgHistoryLocation): Promise<void> {
  await tx.execute(sql`CREATE SCHEMA IF NOT EXISTS ${sql.identifier(history.schema)}`);
  await tx.execute(
    sql`CREATE TABLE IF NOT EXISTS ${qualifiedName(history)} (id SERIAL PRIMARY KEY, hash text NOT NULL, created_at bigint)`,
  );
}

/** Every row of the legacy table, in id order (created_at as text: copied exactly, whatever the driver makes of bigint). */
async function legacyRows(db: PgExecutor, legacy: PgHistoryLocation): Promise<LegacyRow[]> {
  if (!(await tableExists(db, legacy.schema, legacy.table))) return [];
  return rowsOf<{ id: number; hash: string; created_at: string | null }>(
    await db.execute(
      sql`SELECT "id", "hash", "created_at"::text AS "created_at" FROM ${qualifiedName(legacy)} ORDER BY "id"`,
    ),
  ).map((r) => ({ key: r.id, hash: r.hash, createdAt: r.created_at }));
}

/**
 * A database migrated by a version up to 0.1.0 keeps our history in Drizzle's shared table: move our rows
 * (known or superseded hashes) into our table once, leave every other app's row where it is, and drop the
 * shared table (and Drizzle's schema) only when nothing else is left in it. Runs under the migration lock,
 * in the migration's transaction, and only while our own history is empty.
 */
async function moveLegacyHistory(
  tx: PgExecutor,
  local: MigrationFile[],
  history: PgHistoryLocation,
  legacy: PgHistoryLocation | undefined,
): Promise<void> {
  if (legacy === undefined || !(await tableExists(tx, legacy.schema, legacy.table))) return;
  if ((await recordedHashes(tx, history)).length > 0) return;
  // Until commit, a concurrent drizzle-kit can read the table but not add a row we would then drop.
  await tx.execute(sql`LOCK TABLE ${qualifiedName(legacy)} IN EXCLUSIVE MODE`);
  const rows = await legacyRows(tx, legacy);
  const ours = legacyRowsToMove(local, rows);
  if (ours.length === 0) return;
  await createHistory(tx, history);
  for (const row of ours) {
    await tx.execute(
      sql`INSERT INTO ${qualifiedName(history)} ("hash", "created_at") VALUES (${row.currentHash}, CAST(${row.createdAt} AS bigint))`,
    );
    await tx.execute(sql`DELETE FROM ${qualifiedName(legacy)} WHERE "id" = ${row.key}`);
  }
  if (ours.length < rows.length) return;
  await tx.execute(sql`DROP TABLE ${qualifiedName(legacy)}`);
  // RESTRICT would fail the whole migration on a non-empty schema: look first (each object in a schema depends on it).
  const [left] = rowsOf<{ objects: boolean }>(
    await tx.execute(sql`SELECT EXISTS (
      SELECT 1 FROM pg_catalog.pg_depend d JOIN pg_catalog.pg_namespace n ON n.oid = d.refobjid
      WHERE d.refclassid = 'pg_catalog.pg_namespace'::regclass AND n.nspname = ${legacy.schema}) AS "objects"`),
  );
  if (left?.objects === false) await tx.execute(sql`DROP SCHEMA ${sql.identifier(legacy.schema)}`);
}

export async function migratePg(
  conn: Pick<OpenedPg, 'db' | 'transaction'>,
  options: PgMigrateOptions,
): Promise<MigrationReport> {
  // A lost connection or a failed lock is a DatabaseError; a failed migration statement a MigrationError.
  return runMigrations(conn, options).catch((error: unknown) => {
    throw DatabaseError.from(error);
  });
}

async function runMigrations(
  conn: Pick<OpenedPg, 'db' | 'transaction'>,
  options: PgMigrateOptions,
): Promise<MigrationReport> {
  const local = readMigrations(options.migrationsFolder);
  const schema = options.schema ?? DEFAULT_SCHEMA;
  const history = pgHistoryLocation(schema);
  const legacy = pgLegacyHistoryLocation(schema);
  // Fast path without the lock: an up-to-date database (the common open) needs nothing. An empty history
  // always takes the lock: a new database, or one whose legacy history is still to be moved.
  const seen = await recordedHashes(conn.db, history);
  const current = planMigrations(local, seen);
  if (seen.length > 0 && current.pending.length === 0 && current.unknownHashes.length === 0) {
    return { applied: [], alreadyApplied: local.length, total: local.length };
  }
  return conn.transaction(async (tx) => {
    // statementTimeoutMs (or a role's statement_timeout) is for serving: a long backfill must not be cut by it.
    await tx.execute(sql`SET LOCAL statement_timeout = 0`);
    await tx.execute(sql`SELECT pg_advisory_xact_lock(hashtext(${migrationLockKey(schema)}))`);
    await moveLegacyHistory(tx, local, history, legacy);
    const recorded = await recordedHashes(tx, history);
    if (recorded.length === 0 && (await tableExists(tx, schema, 'sessions')))
      throw foreignDatabaseError(options.where, FOREIGN_DATABASE_ADVICE);
    const plan = planMigrations(local, recorded);
    assertNoUnknownMigrations(plan, options.where, displayName(history));
    await enterStoreSchema(tx, schema);
    await createHistory(tx, history);
    for (const migration of plan.pending) {
      try {
        for (const statement of migration.statements) await tx.execute(sql.raw(statement));
      } catch (error) {
        throw statementFailed(migration.tag, error);
      }
      await tx.execute(
        sql`INSERT INTO ${qualifiedName(history)} ("hash", "created_at") VALUES (${migration.hash}, ${migration.createdAt})`,
      );
    }
    assertAllRecorded(local, await recordedHashes(tx, history), options.where);
    return { applied: plan.pending.map((m) => m.tag), alreadyApplied: plan.applied.length, total: local.length };
  });
}

/**
 * What is applied. Read-only: a database whose history still sits in the legacy table (not yet opened with
 * migrations on) reports the migrations recorded there as applied; other apps' rows there are not ours to report.
 */
export async function pgMigrationStatus(
  db: PgExecutor,
  migrationsFolder: string,
  schema: string = DEFAULT_SCHEMA,
): Promise<MigrationStatus> {
  const local = readMigrations(migrationsFolder);
  let recorded = await recordedHashes(db, pgHistoryLocation(schema));
  const legacy = pgLegacyHistoryLocation(schema);
  if (recorded.length === 0 && legacy !== undefined)
    recorded = legacyRowsToMove(local, await legacyRows(db, legacy)).map((r) => r.currentHash);
  const plan = planMigrations(local, recorded);
  return {
    applied: plan.applied.map((m) => m.tag),
    pending: plan.pending.map((m) => m.tag),
    unknownHashes: plan.unknownHashes,
  };
}
