/**
 * MySQL/MariaDB migrator. DDL is not transactional there: every CREATE or ALTER commits on its own, so a
 * migration that fails half-way cannot roll back. Instead:
 *
 * - one migrator at a time per database: a named lock (GET_LOCK) held on the migrator's own connection for
 *   the whole run; the others wait for it, then find the work done;
 * - progress is recorded statement by statement (`__hermes_sessiondb_migration_steps`), so a run that
 *   stopped (a failed statement, a lost connection, a killed process) resumes at the first statement not
 *   recorded, and a migration counts as applied (in `__hermes_sessiondb_migrations`, Drizzle's DDL) only
 *   when all of its statements are;
 * - the one statement that may have taken effect without being recorded (the process died between the two)
 *   is run again, and an "already exists" answer to it counts as done (for a DROP INDEX, "does not exist"):
 *   safe, because it is only accepted for creating (dropping) what the statement names.
 */
import type { Connection } from 'mysql2/promise';
import { DatabaseError, MigrationError, StoreBusyError } from '../../errors.js';
import {
  HISTORY_TABLE,
  type MigrationReport,
  type MigrationStatus,
  assertAllRecorded,
  assertNoUnknownMigrations,
  defaultMigrationsFolder,
  foreignDatabaseError,
  planMigrations,
  readMigrations,
} from '../migrations.js';

/** Where an app whose database already has a "sessions" table keeps the store instead. */
const FOREIGN_DATABASE_ADVICE =
  'An application with its own "sessions" table can host the store in a database of its own.';

/** Statement-level progress of migrations not yet recorded as applied. */
export const MYSQL_STEPS_TABLE = '__hermes_sessiondb_migration_steps';

/** The shipped MySQL/MariaDB migrations. */
export const MYSQL_MIGRATIONS_FOLDER = defaultMigrationsFolder('mysql');

export interface MysqlMigrateOptions {
  migrationsFolder?: string;
  /** Names the database in errors (a redacted URL). */
  where: string;
  /** How long to wait for another migrator's lock (default 10 minutes). */
  lockTimeoutMs?: number;
}

/**
 * Server errors that mean a creating statement's object is already there: table (1050), column (1060),
 * key (1061), foreign key (1826, and 1005 errno 121 on older servers), trigger (1359), procedure (1304).
 */
const ALREADY_EXISTS = new Set([1050, 1060, 1061, 1826, 1359, 1304]);
/** A creating statement, after any leading comment lines and MariaDB's versioned SET STATEMENT prefix (0001, 0004). */
const CREATES =
  /^(\s*--[^\n]*\n)*\s*(\/\*M?!\d*\s+SET\s+STATEMENT\s[^*]*\*\/\s*)?(CREATE\s+(TABLE|(UNIQUE\s+|FULLTEXT\s+)?INDEX|TRIGGER|PROCEDURE)|ALTER\s+TABLE\s+\S+\s+ADD\s)/i;
/** The server's answer when a dropping statement's index is gone already (1091), and such a statement. */
const ALREADY_GONE = new Set([1091]);
const DROPS = /^(\s*--[^\n]*\n)*\s*DROP\s+INDEX\s/i;

type Row = Record<string, unknown>;

async function rows(c: Connection, text: string, params: unknown[] = []): Promise<Row[]> {
  const [result] = await c.query(text, params);
  return result as Row[];
}

async function tableExists(c: Connection, table: string): Promise<boolean> {
  const found = await rows(
    c,
    'SELECT 1 FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ?',
    [table],
  );
  return found.length > 0;
}

const text = (value: unknown): string => (Buffer.isBuffer(value) ? value.toString('utf8') : String(value));

async function recordedHashes(c: Connection): Promise<string[]> {
  if (!(await tableExists(c, HISTORY_TABLE))) return [];
  return (await rows(c, `SELECT \`hash\` FROM \`${HISTORY_TABLE}\` ORDER BY \`id\``)).map((r) => text(r.hash));
}

/** Statements of `hash` already run, by index (the steps table exists: the run creates it first). */
async function doneSteps(c: Connection, hash: string): Promise<Set<number>> {
  const found = await rows(c, `SELECT \`step\` FROM \`${MYSQL_STEPS_TABLE}\` WHERE \`hash\` = ?`, [hash]);
  return new Set(found.map((r) => Number(r.step)));
}

/** The named lock of one database's migrators (GET_LOCK names are at most 64 characters). */
async function lock(c: Connection, timeoutMs: number): Promise<string> {
  const [row] = await rows(c, 'SELECT SHA1(DATABASE()) AS h');
  const name = `hermes-sessiondb:migrate:${text(row?.h).slice(0, 32)}`;
  const started = Date.now();
  const [got] = await rows(c, 'SELECT GET_LOCK(?, ?) AS got', [name, Math.max(1, Math.ceil(timeoutMs / 1000))]);
  if (Number(got?.got) !== 1) throw new StoreBusyError(Date.now() - started);
  return name;
}

export async function migrateMysql(c: Connection, options: MysqlMigrateOptions): Promise<MigrationReport> {
  return runMigrations(c, options).catch((error: unknown) => {
    throw DatabaseError.from(error);
  });
}

async function runMigrations(c: Connection, options: MysqlMigrateOptions): Promise<MigrationReport> {
  const local = readMigrations(options.migrationsFolder ?? MYSQL_MIGRATIONS_FOLDER);
  // Fast path without the lock: an up-to-date database (the common open) needs nothing.
  const seen = await recordedHashes(c);
  const current = planMigrations(local, seen);
  if (seen.length > 0 && current.pending.length === 0 && current.unknownHashes.length === 0) {
    return { applied: [], alreadyApplied: local.length, total: local.length };
  }
  const name = await lock(c, options.lockTimeoutMs ?? 600_000);
  try {
    const recorded = await recordedHashes(c);
    if (recorded.length === 0 && !(await tableExists(c, MYSQL_STEPS_TABLE)) && (await tableExists(c, 'sessions')))
      throw foreignDatabaseError(options.where, FOREIGN_DATABASE_ADVICE);
    const plan = planMigrations(local, recorded);
    assertNoUnknownMigrations(plan, options.where, `\`${HISTORY_TABLE}\``);
    await c.query(
      `CREATE TABLE IF NOT EXISTS \`${HISTORY_TABLE}\` (id SERIAL PRIMARY KEY, hash text NOT NULL, created_at bigint)`,
    );
    await c.query(
      `CREATE TABLE IF NOT EXISTS \`${MYSQL_STEPS_TABLE}\` (hash varchar(64) NOT NULL, step int NOT NULL, PRIMARY KEY (hash, step))`,
    );
    for (const migration of plan.pending) {
      const done = await doneSteps(c, migration.hash);
      // Only the first statement not recorded can have run already (see the file's comment).
      const firstPending = migration.statements.findIndex((_, step) => !done.has(step));
      for (const [step, statement] of migration.statements.entries()) {
        if (done.has(step)) continue;
        try {
          await c.query(statement);
        } catch (error) {
          const errno = (error as { errno?: unknown }).errno;
          const ranBefore =
            step === firstPending &&
            typeof errno === 'number' &&
            ((ALREADY_EXISTS.has(errno) && CREATES.test(statement)) ||
              (ALREADY_GONE.has(errno) && DROPS.test(statement)));
          if (!ranBefore) {
            throw stepFailed(migration.tag, step, migration.statements.length, error);
          }
        }
        await c.query(`INSERT INTO \`${MYSQL_STEPS_TABLE}\` (hash, step) VALUES (?, ?)`, [migration.hash, step]);
      }
      await c.query(`INSERT INTO \`${HISTORY_TABLE}\` (hash, created_at) VALUES (?, ?)`, [
        migration.hash,
        migration.createdAt,
      ]);
      await c.query(`DELETE FROM \`${MYSQL_STEPS_TABLE}\` WHERE hash = ?`, [migration.hash]);
    }
    assertAllRecorded(local, await recordedHashes(c), options.where);
    return { applied: plan.pending.map((m) => m.tag), alreadyApplied: plan.applied.length, total: local.length };
  } finally {
    await c.query('SELECT RELEASE_LOCK(?)', [name]).catch(() => {});
  }
}

function stepFailed(tag: string, step: number, of: number, error: unknown): MigrationError {
  const message = error instanceof Error ? error.message : String(error);
  return new MigrationError(
    'STATEMENT_FAILED',
    `Migration ${tag} failed at statement ${step + 1} of ${of}: ${message}. MySQL cannot roll DDL back: the ` +
      `statements before it took effect and are recorded. Fix the cause and migrate again to resume at statement ${step + 1}.`,
    { cause: error },
  );
}

export async function mysqlMigrationStatus(c: Connection, migrationsFolder?: string): Promise<MigrationStatus> {
  const local = readMigrations(migrationsFolder ?? MYSQL_MIGRATIONS_FOLDER);
  const plan = planMigrations(local, await recordedHashes(c));
  return {
    applied: plan.applied.map((m) => m.tag),
    pending: plan.pending.map((m) => m.tag),
    unknownHashes: plan.unknownHashes,
  };
}
