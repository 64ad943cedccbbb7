/**
 * The dialect-independent half of migrating: reading the checked-in migration files and deciding what to run.
 *
 * Files, hashes and the `__drizzle_migrations` bookkeeping table are Drizzle's own (so `drizzle-kit migrate`
 * and this migrator agree on what has been applied). The *decision* is ours: Drizzle 0.x applies only
 * migrations newer than the newest recorded timestamp, which silently skips one that arrives out of order
 * (a merge, a renumbering). We compare by hash instead: every local migration whose hash is not recorded is
 * pending, in journal order, and a recorded hash we do not ship means the database is newer than this code.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { readMigrationFiles } from 'drizzle-orm/migrator';
import { MigrationError } from '../errors.js';

export type Dialect = 'sqlite' | 'pg';

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

export function planMigrations(local: MigrationFile[], recordedHashes: Iterable<string>): MigrationPlan {
  const recorded = new Set(recordedHashes);
  const localHashes = new Set(local.map((m) => m.hash));
  return {
    pending: local.filter((m) => !recorded.has(m.hash)),
    applied: local.filter((m) => recorded.has(m.hash)),
    unknownHashes: [...recorded].filter((h) => !localHashes.has(h)),
  };
}

/** Refuse a database that records migrations we do not ship: it was migrated by a newer version. */
export function assertNoUnknownMigrations(plan: MigrationPlan, where: string): void {
  if (plan.unknownHashes.length > 0) {
    throw new MigrationError(
      'UNKNOWN_MIGRATIONS',
      `${where} has ${plan.unknownHashes.length} migration(s) this version of hermes-sessiondb does not know ` +
        `(first hash ${plan.unknownHashes[0]!.slice(0, 12)}…); it was migrated by a newer version. ` +
        'Upgrade hermes-sessiondb instead of opening it with this one.',
    );
  }
}

/** After applying, every local migration must be recorded; Drizzle 0.x could skip one and report success. */
export function assertAllRecorded(local: MigrationFile[], recordedHashes: Iterable<string>, where: string): void {
  const recorded = new Set(recordedHashes);
  const missing = local.filter((m) => !recorded.has(m.hash));
  if (missing.length > 0) {
    throw new MigrationError(
      'NOT_APPLIED',
      `${where}: migration(s) ${missing.map((m) => m.tag).join(', ')} are not recorded after migrating`,
    );
  }
}

export function foreignDatabaseError(where: string): MigrationError {
  return new MigrationError(
    'FOREIGN_DATABASE',
    `${where} already has a "sessions" table but no hermes-sessiondb migration history. ` +
      'It is probably a Hermes state.db or another application\'s database. Open it with { migrate: false } ' +
      'to read it as it is, or import it into a new store with `hermes-sessiondb import`.',
  );
}

export function statementFailed(tag: string, error: unknown): MigrationError {
  const message = error instanceof Error ? error.message : String(error);
  return new MigrationError('STATEMENT_FAILED', `Migration ${tag} failed and was rolled back: ${message}`, {
    cause: error,
  });
}
