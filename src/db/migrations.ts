/**
 * The dialect-independent half of migrating: reading the checked-in migration files and deciding what to run.
 *
 * Files and hashes are Drizzle's own, and so is the DDL of our history table; only its name is ours
 * (`__hermes_sessiondb_migrations`, on Postgres in its own schema), so an app's drizzle-kit history and ours
 * never mix, and `drizzle-kit migrate` given that table in its `migrations` config records compatible rows.
 * The *decision* is ours: Drizzle 0.x applies only migrations newer than the newest recorded timestamp,
 * which silently skips one that arrives out of order (a merge, a renumbering). We compare by hash instead:
 * every local migration whose hash is not recorded is pending, in journal order, and a recorded hash we do
 * not ship means the database is newer than this code.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { readMigrationFiles } from 'drizzle-orm/migrator';
import { MigrationError } from '../errors.js';

import type { DialectName } from './engines.js';

export { DIALECT_NAMES, type DialectName } from './engines.js';
/** The same union under the name it was first exported as. */
export type Dialect = DialectName;

/** Our migration history table (SQLite: in `main`; Postgres: see pgHistoryLocation). */
export const HISTORY_TABLE = '__hermes_sessiondb_migrations';
/** Drizzle's default history table, where versions up to 0.1.0 recorded ours (moved out once, see LegacyRow). */
export const LEGACY_HISTORY_TABLE = '__drizzle_migrations';

/**
 * Hashes a shipped migration file had before an edit that changed its text but not what it does to a
 * database that already ran it: previous hash -> tag. A recorded previous hash counts as that migration
 * applied (databases migrated before the edit stay valid), and the one-time legacy move rewrites it.
 */
export const SUPERSEDED_HASHES: ReadonlyMap<string, string> = new Map([
  // drizzle/pg/0001_hermes_v11_tables.sql as 0.1.0 shipped it: its three FOREIGN KEYs said
  // REFERENCES "public"."sessions". Unqualified now, so the tables can live in any schema; in the
  // default layout it resolves to the same table.
  ['354cbc18e2836a25492832ddaf534c3184741e3255ee2d87ce680d4364d13b76', '0001_hermes_v11_tables'],
]);

export interface MigrationFile {
  /** The journal tag, e.g. `0002_fts5_search`. */
  tag: string;
  /** sha256 of the file, as Drizzle computes it. */
  hash: string;
  /** The journal's `when` (ms), recorded as `created_at`. */
  createdAt: number;
  /** Statements split on `--> statement-breakpoint`, empty ones dropped. */
  statements: string[];
}

export interface MigrationPlan {
  pending: MigrationFile[];
  applied: MigrationFile[];
  /** Hashes recorded in the database that no local migration has. */
  unknownHashes: string[];
}

export interface MigrationReport {
  /** Tags applied by this call, in order. Empty when the database was already up to date. */
  applied: string[];
  /** How many local migrations were already recorded before this call. */
  alreadyApplied: number;
  /** How many migrations this version ships. */
  total: number;
}

export interface MigrationStatus {
  applied: string[];
  pending: string[];
  unknownHashes: string[];
}

/** The folder holding a dialect's migrations, shipped next to `src/` and `dist/`. */
export function defaultMigrationsFolder(dialect: Dialect): string {
  return fileURLToPath(new URL(`../../drizzle/${dialect}`, import.meta.url));
}

const cache = new Map<string, MigrationFile[]>();

export function readMigrations(folder: string): MigrationFile[] {
  const key = path.resolve(folder);
  const cached = cache.get(key);
  if (cached) return cached;

  let journal: { entries?: Array<{ tag?: unknown; when?: unknown }> };
  let files: ReturnType<typeof readMigrationFiles>;
  try {
    journal = JSON.parse(fs.readFileSync(path.join(key, 'meta', '_journal.json'), 'utf8'));
    files = readMigrationFiles({ migrationsFolder: key });
  } catch (error) {
    throw new MigrationError('BAD_MIGRATION_FILES', `Cannot read migrations in ${key}: ${String(error)}`, {
      cause: error,
    });
  }
  const entries = journal.entries ?? [];
  if (entries.length !== files.length) {
    throw new MigrationError('BAD_MIGRATION_FILES', `Journal and files disagree in ${key}`);
  }
  const migrations = files.map((file, i): MigrationFile => {
    const tag = entries[i]?.tag;
    if (typeof tag !== 'string') throw new MigrationError('BAD_MIGRATION_FILES', `Journal entry ${i} has no tag`);
    if (i > 0 && !(file.folderMillis > files[i - 1]!.folderMillis)) {
      throw new MigrationError(
        'BAD_MIGRATION_FILES',
        `Journal timestamps must strictly increase: ${tag} (${file.folderMillis}) is not after its predecessor`,
      );
    }
    return { tag, hash: file.hash, createdAt: file.folderMillis, statements: file.sql.filter(hasSql) };
  });
  cache.set(key, migrations);
  return migrations;
}

/** True when a chunk holds something besides whitespace and `--` comments. */
function hasSql(chunk: string): boolean {
  return chunk.split('\n').some((line) => {
    const trimmed = line.trim();
    return trimmed !== '' && !trimmed.startsWith('--');
  });
}

/** The current hash of what `hash` records: itself when shipped, the successor of a superseded hash, else undefined. */
function currentHash(local: MigrationFile[], hash: string): string | undefined {
  if (local.some((m) => m.hash === hash)) return hash;
  const tag = SUPERSEDED_HASHES.get(hash);
  return tag === undefined ? undefined : local.find((m) => m.tag === tag)?.hash;
}

export function planMigrations(local: MigrationFile[], recordedHashes: Iterable<string>): MigrationPlan {
  const recorded = new Set<string>();
  const unknownHashes: string[] = [];
  for (const hash of recordedHashes) {
    const current = currentHash(local, hash);
    if (current === undefined) {
      if (!unknownHashes.includes(hash)) unknownHashes.push(hash);
    } else recorded.add(current);
  }
  return {
    pending: local.filter((m) => !recorded.has(m.hash)),
    applied: local.filter((m) => recorded.has(m.hash)),
    unknownHashes,
  };
}

/** A row of Drizzle's `__drizzle_migrations` as a version up to 0.1.0 (or drizzle-kit with our folder) left it. */
export interface LegacyRow {
  /** What identifies the row for the delete: `id` on Postgres, `rowid` on SQLite (Drizzle's SQLite ids are NULL). */
  key: number | string;
  hash: string;
  /** As stored, copied unchanged. */
  createdAt: unknown;
}

/**
 * Of the legacy rows (in id order), the ones that are ours: a hash we ship or a superseded one. They are
 * copied with their current hash; every other row belongs to another app and is never touched.
 */
export function legacyRowsToMove(
  local: MigrationFile[],
  rows: LegacyRow[],
): Array<LegacyRow & { currentHash: string }> {
  return rows.flatMap((row) => {
    const current = currentHash(local, row.hash);
    return current === undefined ? [] : [{ ...row, currentHash: current }];
  });
}

/** Refuse a database whose history records migrations we do not ship: it was migrated by a newer version. */
export function assertNoUnknownMigrations(plan: MigrationPlan, where: string, history: string): void {
  if (plan.unknownHashes.length > 0) {
    throw new MigrationError(
      'UNKNOWN_MIGRATIONS',
      `${where}: its hermes-sessiondb migration history (${history}) records ${plan.unknownHashes.length} ` +
        `migration(s) this version of hermes-sessiondb does not ship: ${plan.unknownHashes.join(', ')}. ` +
        'It was migrated by a newer version of hermes-sessiondb (or from another migrations folder). ' +
        'Upgrade hermes-sessiondb to open it, or open it with { migrate: false } to read it as it is.',
    );
  }
}

/** After applying, every local migration must be recorded; Drizzle 0.x could skip one and report success. */
export function assertAllRecorded(local: MigrationFile[], recordedHashes: Iterable<string>, where: string): void {
  const missing = planMigrations(local, recordedHashes).pending;
  if (missing.length > 0) {
    throw new MigrationError(
      'NOT_APPLIED',
      `${where}: migration(s) ${missing.map((m) => m.tag).join(', ')} are not recorded after migrating`,
    );
  }
}

/** `advice`: where an application with its own "sessions" table keeps the store on this engine. */
export function foreignDatabaseError(where: string, advice: string): MigrationError {
  return new MigrationError(
    'FOREIGN_DATABASE',
    `${where} already has a "sessions" table but no hermes-sessiondb migration history. ` +
      "It is probably a Hermes state.db or another application's database. Open it with { migrate: false } " +
      `to read it as it is, or import it into a new store with \`hermes-sessiondb import\`. ${advice}`,
  );
}

export function statementFailed(tag: string, error: unknown): MigrationError {
  const message = error instanceof Error ? error.message : String(error);
  return new MigrationError('STATEMENT_FAILED', `Migration ${tag} failed and was rolled back: ${message}`, {
    cause: error,
  });
}
