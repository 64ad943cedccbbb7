/**
 * The listing query behind list_sessions_rich and the Telegram "unlinked sessions" list: session columns
 * plus `last_active` (latest message, else started_at) and `_preview_raw` (the first user message,
 * newlines flattened, first 63 characters). Structured first messages preview as their text parts; in
 * Hermes they preview blank, because SQLite's text functions stop at the NUL of "\x00json:".
 */
import { type SQL, sql } from 'drizzle-orm';
import type { Spelling } from '../db/dialect.js';
import { COMPRESSION_TIP_HOPS, compressionWalkCte } from './lineage.js';

/** The rich columns of sessions alias `s`; with `maintained`, the FROM clause must add `d.activity.of('s').join`. */
export function richColumns(d: Spelling, maintained = false): SQL {
  return sql`s.*, ${previewOf(d, 's')} AS _preview_raw, ${lastActiveOf(d, 's', maintained)} AS last_active`;
}

/**
 * Latest message, else started_at: read from the kept last_message_at where the triggers keep it (migration
 * *_session_activity_triggers; d.activity's join must be in the FROM clause), else one index seek per row (a
 * Hermes file opened with { migrate: false }).
 */
function lastActiveOf(d: Spelling, alias: 's' | 't', maintained: boolean): SQL {
  const a = sql.raw(alias);
  return maintained
    ? sql`COALESCE(${d.activity.of(alias).lastMessageAt}, ${a}.started_at)`
    : sql`COALESCE((SELECT MAX(m2.timestamp) FROM ${d.t.messages} m2 WHERE m2.session_id = ${a}.id), ${a}.started_at)`;
}

/** The first user message with content of session `alias`, flattened and cut as Hermes does. */
function previewOf(d: Spelling, alias: 's' | 't'): SQL {
  return sql`COALESCE((
      SELECT SUBSTR(REPLACE(REPLACE(${d.previewText('m')}, ${'\n'}, ' '), ${'\r'}, ' '), 1, 63)
      FROM ${d.t.messages} m
      WHERE m.session_id = ${sql.raw(alias)}.id AND m.role = 'user' AND ${d.hasContent('m')}
      ORDER BY m.timestamp, m.id LIMIT 1
    ), '')`;
}

/** Roots, plus /branch children (started after their parent ended with 'branched'). */
export const rootsAndBranches = (d: Spelling) => sql`(s.parent_session_id IS NULL OR EXISTS (
  SELECT 1 FROM ${d.t.sessions} p WHERE p.id = s.parent_session_id AND p.end_reason = 'branched' AND s.started_at >= p.ended_at))`;

export function whereAll(conditions: SQL[]): SQL {
  return conditions.length === 0 ? sql`` : sql`WHERE ${sql.join(conditions, sql` AND `)}`;
}

export interface ListingQuery {
  where: SQL;
  limit: number;
  offset: number;
  /** Hermes' order_by_last_active; otherwise started_at. Ties: started_at, then id, descending. */
  byActivity: boolean;
  /** Add the compression tip's columns (`_tip_*`) to each compression root. */
  withTips: boolean;
  /**
   * sessions.last_message_at and chain_last_active exist and are kept by triggers (every store we migrated);
   * false for a Hermes file opened as it is, where Hermes' recursive CTE computes the order instead.
   */
  maintained: boolean;
}

/**
 * list_sessions_rich in one statement: the page (LIMIT/OFFSET first, as in Hermes), then for each row that ended
 * with 'compression' its compression tip's listed columns, prefixed `_tip_` (the projection Hermes does per row
 * in Python; one statement instead of two round trips per compression root).
 *
 * The activity order reads sessions.chain_last_active, which triggers (migrations *_session_activity_triggers)
 * keep equal to what Hermes' recursive CTE computes per listed session, so the page is the first rows of
 * idx_sessions_chain_last_active instead of a walk over every chain.
 */
export function listingQuery(d: Spelling, q: ListingQuery): SQL {
  // No key is NULL (started_at is NOT NULL, chain_last_active is always set): NULLs last is the same order,
  // spelled as the indexes hold it so that they serve it.
  const desc = d.descNullsLast;
  const kept = d.activity.of('s');
  // The page's keys as the activity index holds them (MySQL: session_activity's copies of started_at and id).
  const keys = q.byActivity
    ? [kept.chainLastActive, kept.startedAt, d.binary(kept.id)]
    : [sql`s.started_at`, d.binary(sql`s.id`)];
  const tipId = q.withTips
    ? sql`, CASE WHEN s.end_reason = 'compression' THEN ${compressionTipOf(d, sql`s.id`)} END AS _tip_id`
    : sql``;
  const chainColumn = q.byActivity && q.maintained ? sql`, ${kept.chainLastActive} AS _chain_last_active` : sql``;
  const page =
    q.byActivity && !q.maintained
      ? chainActivityPage(d, q.where, sql`${richColumns(d)}${tipId}`, q.limit, q.offset)
      : sql`SELECT ${richColumns(d, q.maintained)}${chainColumn}${tipId}
    FROM ${d.t.sessions} s ${q.maintained ? kept.join : sql``} ${q.where}
    ORDER BY ${sql.join(
      keys.map((k) => sql`${k} ${desc}`),
      sql`, `,
    )} LIMIT ${d.int(q.limit)} OFFSET ${d.int(q.offset)}`;
  if (!q.withTips) return page;
  const outerKeys = [...(q.byActivity ? [sql`l._chain_last_active`] : []), sql`l.started_at`, d.binary(sql`l.id`)];
  return sql`SELECT l.*, ${tipColumns(d, q.maintained)}
    FROM (${page}) l LEFT JOIN ${d.t.sessions} t ON t.id = l._tip_id AND t.id <> l.id
    ${q.maintained ? d.activity.of('t', true).join : sql``}
    ORDER BY ${sql.join(
      outerKeys.map((k) => sql`${k} ${desc}`),
      sql`, `,
    )}`;
}

/**
 * Without maintained values: Hermes' recursive CTE over every listed session's compression chain (bounded like
 * every lineage walk: Hermes' version has no bound and never ends on a cycle). The WHERE fragment seeds the chain
 * and filters the outer rows. Every listed session roots a chain, so the sessions are joined to chain_max (Hermes
 * writes a LEFT JOIN the other way round): each row then meets its session by primary key, where MariaDB, which
 * builds no index on a derived table keyed by a 3,048-byte id, compared every session with every chain (5 s at
 * 10,000 sessions, 0.2 s this way).
 */
function chainActivityPage(d: Spelling, where: SQL, columns: SQL, limit: number, offset: number): SQL {
  return sql`
    WITH RECURSIVE chain(root_id, cur_id, depth) AS (
      SELECT s.id, s.id, 0 FROM ${d.t.sessions} s ${where}
      UNION ALL
      SELECT c.root_id, child.id, c.depth + 1
      FROM chain c
      JOIN ${d.t.sessions} parent ON parent.id = c.cur_id
      JOIN ${d.t.sessions} child ON child.parent_session_id = c.cur_id
      WHERE parent.end_reason = 'compression' AND child.started_at >= parent.ended_at AND c.depth < ${COMPRESSION_TIP_HOPS}
    ),
    chain_max AS (
      SELECT root_id, MAX(COALESCE(
        (SELECT MAX(m.timestamp) FROM ${d.t.messages} m WHERE m.session_id = cur_id),
        (SELECT ss.started_at FROM ${d.t.sessions} ss WHERE ss.id = cur_id)
      )) AS effective_last_active
      FROM chain GROUP BY root_id
    )
    SELECT ${columns}, COALESCE(cm.effective_last_active, s.started_at) AS _chain_last_active
    FROM chain_max cm JOIN ${d.t.sessions} s ON s.id = cm.root_id
    ${where}
    ORDER BY COALESCE(cm.effective_last_active, s.started_at) DESC, s.started_at DESC, ${d.binary(sql`s.id`)} DESC
    LIMIT ${d.int(limit)} OFFSET ${d.int(offset)}`;
}

/** A compression tip's listed columns (session `t`), prefixed `_tip_`. */
function tipColumns(d: Spelling, maintained: boolean): SQL {
  return sql`t.id AS _tip_found, t.ended_at AS _tip_ended_at, t.end_reason AS _tip_end_reason,
      t.message_count AS _tip_message_count, t.tool_call_count AS _tip_tool_call_count, t.title AS _tip_title,
      ${lastActiveOf(d, 't', maintained)} AS _tip_last_active, ${previewOf(d, 't')} AS _tip_preview_raw,
      t.model AS _tip_model, t.system_prompt AS _tip_system_prompt`;
}

/**
 * The `_tip_*` columns of the compression roots `ids` whose tip is another session, with the root as `_root`: on
 * SQLite, where a second statement costs no round trip, this is cheaper than carrying the whole page through
 * listingQuery's outer join and second sort. All roots walk in one uncorrelated CTE (MariaDB refuses a CTE that
 * refers to the outer row); each root's tip is compressionTipOf's: of the ids walked, the one first reached last.
 */
export function tipsQuery(d: Spelling, ids: readonly string[], maintained: boolean): SQL {
  return sql`WITH RECURSIVE walk(root, id, depth) AS (
      SELECT r.id, r.id, 0 FROM ${d.t.sessions} r WHERE r.id IN (${sql.join(
        ids.map((id) => d.text(id)),
        sql`, `,
      )})
      UNION ALL
      SELECT w.root, (
        SELECT c.id FROM ${d.t.sessions} p JOIN ${d.t.sessions} c ON c.parent_session_id = p.id
        WHERE p.id = w.id AND p.end_reason = 'compression' AND c.started_at >= p.ended_at
        ORDER BY c.started_at DESC, ${d.binary(sql`c.id`)} DESC LIMIT 1
      ), w.depth + 1
      FROM walk w WHERE w.id IS NOT NULL AND w.depth < ${COMPRESSION_TIP_HOPS}
    ),
    firsts AS (SELECT root, id, MIN(depth) AS first FROM walk WHERE id IS NOT NULL GROUP BY root, id),
    tips AS (SELECT f.root, f.id FROM firsts f WHERE f.first = (SELECT MAX(g.first) FROM firsts g WHERE g.root = f.root))
    SELECT tips.root AS _root, ${tipColumns(d, maintained)}
    FROM tips JOIN ${d.t.sessions} t ON t.id = tips.id ${maintained ? d.activity.of('t', true).join : sql``}
    WHERE tips.id <> tips.root`;
}

/**
 * The compression tip of session `id` as a scalar subquery: the compressionWalk steps (newest qualifying child,
 * at most COMPRESSION_TIP_HOPS), ending before the first repeated id (a cycle), as untilRepeat does: of the ids
 * walked, the one first reached last.
 */
function compressionTipOf(d: Spelling, id: SQL): SQL {
  return sql`(
    WITH RECURSIVE ${compressionWalkCte(d, id)}
    SELECT w.id FROM walk w WHERE w.id IS NOT NULL GROUP BY w.id ORDER BY MIN(w.depth) DESC LIMIT 1)`;
}

/**
 * Sessions with `last_active`, most recently active first (Hermes' search_sessions, which export_all
 * uses). Ties: started_at, then id, both descending.
 */
export function byActivity(d: Spelling, source: string | null | undefined, limit: number, offset: number): SQL {
  return activityOrder(d, sql`s.*`, source, limit, offset);
}

/** byActivity's ids, in its order (a streamed export reads the rows themselves a page at a time). */
export function idsByActivity(d: Spelling, source: string | null | undefined, limit: number): SQL {
  return activityOrder(d, sql`s.id`, source, limit, 0);
}

// One index seek per session for its latest message (idx_messages_session), not a GROUP BY over every message:
// at 200,000 messages that read was one 150 ms synchronous stretch at the start of an export.
function activityOrder(
  d: Spelling,
  columns: SQL,
  source: string | null | undefined,
  limit: number,
  offset: number,
): SQL {
  return sql`
    SELECT ${columns}, COALESCE((SELECT MAX(m.timestamp) FROM ${d.t.messages} m WHERE m.session_id = s.id), s.started_at) AS last_active
    FROM ${d.t.sessions} s
    ${source ? sql`WHERE s.source = ${d.text(source)}` : sql``}
    ORDER BY last_active DESC, s.started_at DESC, ${d.binary(sql`s.id`)} DESC
    LIMIT ${d.int(limit)} OFFSET ${d.int(offset)}`;
}
