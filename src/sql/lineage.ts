/**
 * Lineage walks as recursive CTEs, the same text on SQLite and Postgres. Each is bounded (100 hops, or 32
 * for the resume redirect, as in Hermes) so a cycle in parent_session_id cannot loop; the callers drop
 * repeated ids, which is where Hermes' visited-set stops the walk.
 */
import { type SQL, sql } from 'drizzle-orm';
import type { Spelling } from '../db/dialect.js';

export const ANCESTOR_HOPS = 100;
export const COMPRESSION_TIP_HOPS = 100;
export const RESUME_HOPS = 32;

/** `id` and each parent up the chain, with depth (0 = the session itself). */
export function ancestorsWalk(d: Spelling, id: string): SQL {
  return sql`
    WITH RECURSIVE walk(id, parent, depth) AS (
      SELECT s.id, s.parent_session_id, 0 FROM ${d.t.sessions} s WHERE s.id = ${d.text(id)}
      UNION ALL
      SELECT s.id, s.parent_session_id, w.depth + 1
      FROM walk w JOIN ${d.t.sessions} s ON s.id = w.parent
      WHERE w.depth < ${ANCESTOR_HOPS}
    )
    SELECT id, depth FROM walk ORDER BY depth`;
}

/**
 * The messages of `id` and its ancestors (those ancestorsWalk finds), as `columns`, in id order: the
 * lineage walk and the read in one statement. The walk starts from `id` itself whether or not it exists
 * (Hermes always includes the starting id), and a cycle only repeats ids already in the set, so the set is
 * what the walk visits before its first repeat.
 */
export function ancestorMessages(d: Spelling, id: string, columns: SQL): SQL {
  return sql`
    WITH RECURSIVE walk(id, parent, depth) AS (
      SELECT ${d.walkSeed(d.text(id))}, (SELECT s.parent_session_id FROM ${d.t.sessions} s WHERE s.id = ${d.text(id)}), 0
      UNION ALL
      SELECT s.id, s.parent_session_id, w.depth + 1
      FROM walk w JOIN ${d.t.sessions} s ON s.id = w.parent
      WHERE w.depth < ${ANCESTOR_HOPS}
    )
    SELECT ${columns} FROM ${d.t.messages} m WHERE ${d.inSubquery(sql`m.session_id`, sql`SELECT id FROM walk`)}
    ORDER BY m.id`;
}

/**
 * Forward along compression continuations: the child that started at or after its parent ended with
 * end_reason 'compression', newest first (ties: the larger id). One row per step; the last is the tip.
 */
export function compressionWalk(d: Spelling, id: string): SQL {
  return sql`
    WITH RECURSIVE ${compressionWalkCte(d, d.text(id))}
    SELECT id, depth FROM walk WHERE id IS NOT NULL ORDER BY depth`;
}

/** The `walk(id, depth)` CTE of compressionWalk from `seed` (an id expression), for use inside other statements. */
export function compressionWalkCte(d: Spelling, seed: SQL): SQL {
  return sql`walk(id, depth) AS (
      SELECT ${d.walkSeed(seed)}, 0
      UNION ALL
      SELECT (
        SELECT c.id FROM ${d.t.sessions} p JOIN ${d.t.sessions} c ON c.parent_session_id = p.id
        WHERE p.id = w.id AND p.end_reason = 'compression' AND c.started_at >= p.ended_at
        ORDER BY c.started_at DESC, ${d.binary(sql`c.id`)} DESC LIMIT 1
      ), w.depth + 1
      FROM walk w WHERE w.id IS NOT NULL AND w.depth < ${COMPRESSION_TIP_HOPS}
    )`;
}

/** Forward along the latest child of any kind, with whether each step has messages (the resume redirect). */
export function resumeWalk(d: Spelling, id: string): SQL {
  return sql`
    WITH RECURSIVE walk(id, depth) AS (
      SELECT ${d.walkSeed(d.text(id))}, 0
      UNION ALL
      SELECT (
        SELECT c.id FROM ${d.t.sessions} c WHERE c.parent_session_id = w.id
        ORDER BY c.started_at DESC, ${d.binary(sql`c.id`)} DESC LIMIT 1
      ), w.depth + 1
      FROM walk w WHERE w.id IS NOT NULL AND w.depth < ${RESUME_HOPS}
    )
    SELECT w.id, w.depth, EXISTS (SELECT 1 FROM ${d.t.messages} m WHERE m.session_id = w.id) AS has_messages
    FROM walk w WHERE w.id IS NOT NULL ORDER BY w.depth`;
}

/** Every session below `id` (children, grandchildren, …). UNION drops repeats, so a cycle ends the walk. */
export function descendantsWalk(d: Spelling, id: string): SQL {
  return sql`
    WITH RECURSIVE below(id) AS (
      SELECT s.id FROM ${d.t.sessions} s WHERE s.parent_session_id = ${d.text(id)}
      UNION
      SELECT s.id FROM below b JOIN ${d.t.sessions} s ON s.parent_session_id = b.id
    )
    SELECT s.id FROM below b JOIN ${d.t.sessions} s ON s.id = b.id
    WHERE s.id <> ${d.text(id)}
    ORDER BY s.started_at, ${d.binary(sql`s.id`)}`;
}

/** Distinct ids in walk order: the walk stops where an id repeats (a cycle). */
export function untilRepeat<T extends { id: unknown }>(rows: T[]): T[] {
  const seen = new Set<string>();
  const out: T[] = [];
  for (const row of rows) {
    const key = String(row.id);
    if (seen.has(key)) break;
    seen.add(key);
    out.push(row);
  }
  return out;
}
