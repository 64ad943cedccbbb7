/**
 * Structures derived from messages that a bulk import (or copy) builds once at the end instead of row by row:
 * the one place that says which AFTER INSERT triggers on messages an import holds off and what builds their
 * work afterwards: the two FTS5 indexes, and sessions' last_message_at / chain_last_active (whose two insert
 * triggers form one entry: held off and rebuilt together, since the pair defines the result).
 *
 * How no index entry or activity value is ever lost:
 * - Each import page runs in one write transaction (the maintenance worker's BEGIN IMMEDIATE … COMMIT) that
 *   reads the triggers' stored SQL from sqlite_master, drops them, inserts the page and creates them again
 *   from that same SQL before COMMIT. Schema changes are transactional: no other connection or process ever
 *   sees the triggers missing (they cannot write while the page holds the lock, and readers see the last
 *   commit), and a crash or a failed page rolls back to the triggers as they were. Rows written by anyone
 *   else, before, between or after the pages, go through the triggers as always.
 * - The import's rows then lack the derived entries until the build: `buildDeferredChunk` (a chunk of the
 *   imported id range per transaction, on the maintenance worker) adds them for the rows in the range that
 *   lack them. A range the index has no rows of is built with one INSERT … SELECT; otherwise (a concurrent
 *   writer's or an earlier import's rows in the range) rows already indexed are skipped. The activity
 *   values are recomputed from the messages themselves (0005's backfill, for the sessions the range touches
 *   and their compression ancestors), so values a concurrent append's trigger raised from a stale base end
 *   right too. An interrupted import is finished by running it again: the same range, the missing entries.
 */
import { type SQL, sql } from 'drizzle-orm';
import { exec, first, rows } from '../ops.js';
import type { Op } from '../ops.js';

/** One derived structure of messages, maintained per row by `triggers`, built for a range by `build`. */
interface DeferredStructure {
  /**
   * The AFTER INSERT triggers on messages that maintain it row by row: held off together during import pages,
   * and only when all of them are present (a partial set is left to run per row, and nothing is built).
   */
  readonly triggers: readonly string[];
  /** Build it for the messages with `from <= id <= to` that lack it (idempotent). */
  build(from: number, to: number): Op<void>;
}

/** The indexed text, as the triggers of drizzle/sqlite/0002_fts5_search.sql compute it (Hermes' FTS_SQL). */
const FTS_TEXT = sql.raw(
  `COALESCE(m.content, '') || ' ' || COALESCE(m.tool_name, '') || ' ' || COALESCE(m.tool_calls, '')`,
);

function fts5Index(table: string): DeferredStructure['build'] {
  const fts = sql.raw(table);
  // The rows it holds are in its %_content shadow table (0002 creates both indexes with their own content):
  // a rowid range on the FTS5 table itself is a scan of the whole index (~25 ms per probe at 200,000 rows).
  const stored = sql.raw(`${table}_content`);
  return function* (from, to) {
    const indexed = yield* first(sql`SELECT id FROM ${stored} WHERE id BETWEEN ${from} AND ${to} LIMIT 1`);
    const missing: SQL = indexed ? sql`AND NOT EXISTS (SELECT 1 FROM ${fts} f WHERE f.rowid = m.id)` : sql``;
    yield* exec(sql`INSERT INTO ${fts}(rowid, content) SELECT m.id, ${FTS_TEXT} FROM messages m
                    WHERE m.id BETWEEN ${from} AND ${to} ${missing} ORDER BY m.id`);
  };
}

/**
 * sessions.last_message_at and chain_last_active, as drizzle/sqlite/0005_session_activity_triggers.sql keeps
 * them, for the sessions with messages in the range and their compression ancestors within 100 hops (the
 * sessions whose chain holds one of them: 0005's "up" walk). Both values are recomputed with 0005's backfill
 * expressions (its last two statements, text for text) rather than raised: whatever the sessions held (the
 * session insert trigger's values from before their messages, an early message that lowers them, an append
 * by another process applied to a stale base), the result is the definition the triggers keep, and a second
 * build changes nothing.
 */
function* sessionActivity(from: number, to: number): Op<void> {
  const touched = sql`SELECT session_id FROM messages WHERE id BETWEEN ${from} AND ${to}`;
  yield* exec(sql`UPDATE sessions SET last_message_at = (SELECT MAX(m.timestamp) FROM messages m WHERE m.session_id = sessions.id)
                  WHERE id IN (${touched})`);
  // UNION, not UNION ALL: sessions of one chain share their ancestors, each is walked once.
  yield* exec(sql`UPDATE sessions SET chain_last_active = (
        WITH RECURSIVE down(id, depth) AS (
            SELECT sessions.id, 0
            UNION ALL
            SELECT c.id, down.depth + 1 FROM down
            JOIN sessions p ON p.id = down.id
            JOIN sessions c ON c.parent_session_id = down.id
            WHERE p.end_reason = 'compression' AND c.started_at >= p.ended_at AND down.depth < 100
        )
        SELECT MAX(COALESCE(
            (SELECT MAX(m.timestamp) FROM messages m WHERE m.session_id = down.id),
            (SELECT x.started_at FROM sessions x WHERE x.id = down.id)))
        FROM down)
    WHERE id IN (WITH RECURSIVE up(id, depth) AS (
        SELECT DISTINCT session_id, 0 FROM messages WHERE id BETWEEN ${from} AND ${to}
        UNION
        SELECT p.id, up.depth + 1 FROM up
        JOIN sessions c ON c.id = up.id
        JOIN sessions p ON p.id = c.parent_session_id
        WHERE p.end_reason = 'compression' AND c.started_at >= p.ended_at AND up.depth < 100
    ) SELECT id FROM up)`);
}

const DEFERRED: readonly DeferredStructure[] = [
  { triggers: ['messages_fts_insert'], build: fts5Index('messages_fts') },
  { triggers: ['messages_fts_trigram_insert'], build: fts5Index('messages_fts_trigram') },
  {
    triggers: ['session_activity_message_insert', 'session_activity_message_insert_early'],
    build: sessionActivity,
  },
];

const TRIGGER_NAMES = sql.join(
  DEFERRED.flatMap((d) => d.triggers.map((t) => sql`${t}`)),
  sql`, `,
);

/** The deferred structures whose triggers are all present, with those triggers' stored CREATE TRIGGER text. */
function* presentStructures(): Op<
  Array<{ structure: DeferredStructure; triggers: Array<{ name: string; sql: string }> }>
> {
  const found = yield* rows<{ name: string; sql: string }>(
    sql`SELECT name, sql FROM sqlite_master WHERE type = 'trigger' AND tbl_name = 'messages' AND name IN (${TRIGGER_NAMES})`,
  );
  const stored = new Map(found.map((t) => [t.name, t.sql]));
  return DEFERRED.filter((d) => d.triggers.every((t) => stored.has(t))).map((structure) => ({
    structure,
    triggers: structure.triggers.map((name) => ({ name, sql: stored.get(name)! })),
  }));
}

/**
 * Run `insert` (an import page into messages) with the deferred triggers held off: dropped and created again
 * from their own stored SQL within the caller's transaction, so only this transaction ever runs without them.
 */
export function* withDeferredTriggers(insert: Op<void>): Op<void> {
  const held = (yield* presentStructures()).flatMap((p) => p.triggers);
  for (const t of held) yield* exec(sql`DROP TRIGGER ${sql.identifier(t.name)}`);
  yield* insert;
  for (const t of held) yield* exec(sql.raw(t.sql));
}

/**
 * Build the deferred structures for the next at most `limit` messages with `after < id <= last` (one
 * transaction's worth): the last id covered, or null when no message is left in the range. Only structures
 * whose triggers all exist are built (a store opened without its search structures gets none, as before).
 */
export function* buildDeferredChunk(after: number, last: number, limit: number): Op<number | null> {
  const end = yield* first<{ end: number | null }>(
    sql`SELECT max(id) AS "end" FROM (SELECT id FROM messages WHERE id > ${after} AND id <= ${last} ORDER BY id LIMIT ${limit})`,
  );
  if (end?.end === null || end?.end === undefined) return null;
  for (const { structure } of yield* presentStructures()) yield* structure.build(after + 1, Number(end.end));
  return Number(end.end);
}
