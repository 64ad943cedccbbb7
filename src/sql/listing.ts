/**
 * The listing query behind list_sessions_rich and the Telegram "unlinked sessions" list: session columns
 * plus `last_active` (latest message, else started_at) and `_preview_raw` (the first user message,
 * newlines flattened, first 63 characters). Structured first messages preview as their text parts; in
 * Hermes they preview blank, because SQLite's text functions stop at the NUL of "\x00json:".
 */
import { type SQL, sql } from 'drizzle-orm';
import type { Dialect } from '../db/dialect.js';
import { COMPRESSION_TIP_HOPS } from './lineage.js';

export function richColumns(d: Dialect): SQL {
  return sql`s.*,
    COALESCE((
      SELECT SUBSTR(REPLACE(REPLACE(${d.previewText('m')}, ${'\n'}, ' '), ${'\r'}, ' '), 1, 63)
      FROM ${d.t.messages} m
      WHERE m.session_id = s.id AND m.role = 'user' AND ${d.hasContent('m')}
      ORDER BY m.timestamp, m.id LIMIT 1
    ), '') AS _preview_raw,
    COALESCE((SELECT MAX(m2.timestamp) FROM ${d.t.messages} m2 WHERE m2.session_id = s.id), s.started_at) AS last_active`;
}

/** Roots, plus /branch children (started after their parent ended with 'branched'). */
export const rootsAndBranches = (d: Dialect) => sql`(s.parent_session_id IS NULL OR EXISTS (
  SELECT 1 FROM ${d.t.sessions} p WHERE p.id = s.parent_session_id AND p.end_reason = 'branched' AND s.started_at >= p.ended_at))`;

export function whereAll(conditions: SQL[]): SQL {
  return conditions.length === 0 ? sql`` : sql`WHERE ${sql.join(conditions, sql` AND `)}`;
}

/**
 * Order by the newest activity anywhere in a root's compression chain (Hermes' order_by_last_active).
 * The WHERE fragment is used twice: to seed the chain and to filter the outer rows.
 */
export function byChainActivity(d: Dialect, where: SQL, limit: number, offset: number): SQL {
  return sql`
    WITH RECURSIVE chain(root_id, cur_id, depth) AS (
      SELECT s.id, s.id, 0 FROM ${d.t.sessions} s ${where}
      UNION ALL
      SELECT c.root_id, child.id, c.depth + 1
      FROM chain c
      JOIN ${d.t.sessions} parent ON parent.id = c.cur_id
      JOIN ${d.t.sessions} child ON child.parent_session_id = c.cur_id
      -- Bounded like every lineage walk: Hermes' version has no bound and never ends on a cycle.
      WHERE parent.end_reason = 'compression' AND child.started_at >= parent.ended_at AND c.depth < ${COMPRESSION_TIP_HOPS}
    ),
    chain_max AS (
      SELECT root_id, MAX(COALESCE(
        (SELECT MAX(m.timestamp) FROM ${d.t.messages} m WHERE m.session_id = cur_id),
        (SELECT ss.started_at FROM ${d.t.sessions} ss WHERE ss.id = cur_id)
      )) AS effective_last_active
      FROM chain GROUP BY root_id
    )
    SELECT ${richColumns(d)}
    FROM ${d.t.sessions} s LEFT JOIN chain_max cm ON cm.root_id = s.id
    ${where}
    ORDER BY COALESCE(cm.effective_last_active, s.started_at) DESC, s.started_at DESC, ${d.binary(sql`s.id`)} DESC
    LIMIT ${d.int(limit)} OFFSET ${d.int(offset)}`;
}

/**
 * Sessions with `last_active`, most recently active first (Hermes' search_sessions, which export_all
 * uses). Ties: started_at, then id, both descending.
 */
export function byActivity(d: Dialect, source: string | null | undefined, limit: number, offset: number): SQL {
  return activityOrder(d, sql`s.*`, source, limit, offset);
}

/** byActivity's ids, in its order (a streamed export reads the rows themselves a page at a time). */
export function idsByActivity(d: Dialect, source: string | null | undefined, limit: number): SQL {
  return activityOrder(d, sql`s.id`, source, limit, 0);
}

// One index seek per session for its latest message (idx_messages_session), not a GROUP BY over every message:
// at 200,000 messages that read was one 150 ms synchronous stretch at the start of an export.
function activityOrder(
  d: Dialect,
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
