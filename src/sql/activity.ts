/**
 * Where a store keeps each session's activity (last_message_at, chain_last_active: drizzle/*\/…session_activity…):
 * in sessions itself on SQLite and Postgres, in the session_activity table on MySQL (a MySQL trigger cannot
 * update the table that fired it). The listing reads them through these fragments.
 */
import { type SQL, sql } from 'drizzle-orm';

/** The kept activity of one aliased sessions row: the join that brings it in, and its columns. */
export interface ActivityColumns {
  /** Added after `sessions <alias>` (empty where sessions holds the values). */
  join: SQL;
  lastMessageAt: SQL;
  chainLastActive: SQL;
  /** started_at and id as the activity index holds them (MySQL: its copies, so that one index gives the order). */
  startedAt: SQL;
  id: SQL;
}

export interface KeptActivity {
  /** A query answering a row when the kept values exist (a Hermes file opened as it is has none). */
  probe: SQL;
  /** The values of sessions alias `a`; `outer` for an alias that may be NULL (a LEFT JOIN's). */
  of(a: string, outer?: boolean): ActivityColumns;
}

/** SQLite and Postgres: columns of sessions, kept by triggers. `probe` is the dialect's column check. */
export function activityInSessions(probe: SQL): KeptActivity {
  return {
    probe,
    of: (a) => ({
      join: sql``,
      lastMessageAt: sql.raw(`${a}.last_message_at`),
      chainLastActive: sql.raw(`${a}.chain_last_active`),
      startedAt: sql.raw(`${a}.started_at`),
      id: sql.raw(`${a}.id`),
    }),
  };
}

/** MySQL: one session_activity row per session (schema/mysql.ts), read as `activity_<alias>`. */
export function activityInTable(probe: SQL): KeptActivity {
  return {
    probe,
    of: (a, outer = false) => {
      const k = `activity_${a}`;
      return {
        join: sql.raw(`${outer ? 'LEFT JOIN' : 'JOIN'} session_activity ${k} ON ${k}.session_id = ${a}.id`),
        lastMessageAt: sql.raw(`${k}.last_message_at`),
        chainLastActive: sql.raw(`${k}.chain_last_active`),
        startedAt: sql.raw(`${k}.started_at`),
        id: sql.raw(`${k}.session_id`),
      };
    },
  };
}
