/**
 * The oracle for sessions.last_message_at and chain_last_active: drizzle/sqlite/0005's own backfill (its last
 * two statements, read from the migration file) run on the file's current data, inside a transaction that is
 * rolled back, against what the file stores.
 */
import fs from 'node:fs';
import Database from 'better-sqlite3';

const BACKFILL = fs
  .readFileSync(new URL('../../drizzle/sqlite/0005_session_activity_triggers.sql', import.meta.url), 'utf8')
  .split('--> statement-breakpoint')
  .slice(-2)
  .map((s) => s.replace(/^\s*--.*$/gm, '').trim());

export interface ActivityRow {
  id: string;
  last_message_at: number | null;
  chain_last_active: number | null;
}

const READ = 'SELECT id, last_message_at, chain_last_active FROM sessions ORDER BY id';

/** Every session's stored values and the values 0005's backfill computes from the same rows. */
export function activityAgainstBackfill(file: string): { stored: ActivityRow[]; backfill: ActivityRow[] } {
  if (!BACKFILL.every((s) => s.startsWith('UPDATE sessions SET')))
    throw new Error('0005 no longer ends with its backfill');
  const db = new Database(file);
  try {
    db.pragma('busy_timeout = 10000');
    db.exec('BEGIN IMMEDIATE');
    try {
      const stored = db.prepare(READ).all() as ActivityRow[];
      for (const s of BACKFILL) db.exec(s);
      const backfill = db.prepare(READ).all() as ActivityRow[];
      return { stored, backfill };
    } finally {
      db.exec('ROLLBACK');
    }
  } finally {
    db.close();
  }
}
