/**
 * Structures derived from messages that a bulk import (or copy) builds once at the end instead of row by row:
 * the one place that says which AFTER INSERT triggers on messages an import holds off and what builds their
 * work afterwards. A second derived value (a session's last activity, say) is one more entry in DEFERRED.
 *
 * How no index entry is ever lost:
 * - Each import page runs in one write transaction (the maintenance worker's BEGIN IMMEDIATE … COMMIT) that
 *   reads the triggers' stored SQL from sqlite_master, drops them, inserts the page and creates them again
 *   from that same SQL before COMMIT. Schema changes are transactional: no other connection or process ever
 *   sees the triggers missing (they cannot write while the page holds the lock, and readers see the last
 *   commit), and a crash or a failed page rolls back to the triggers as they were. Rows written by anyone
 *   else, before, between or after the pages, go through the triggers as always.
 * - The import's rows then lack the derived entries until the build: `buildDeferredChunk` (a chunk of the
 *   imported id range per transaction, on the maintenance worker) adds them for the rows in the range that
 *   lack them. A range the index has no rows of is built with one INSERT … SELECT; otherwise (a concurrent
 *   writer's or an earlier import's rows in the range) rows already indexed are skipped. An interrupted
 *   import is finished by running it again: the same range, the missing entries.
 */
import { type SQL, sql } from 'drizzle-orm';
import { exec, first, rows } from '../db/ops.js';
import type { Op } from '../db/ops.js';

/** One derived structure of messages, maintained per row by `trigger`, built for a range by `build`. */
interface DeferredStructure {
  /** The AFTER INSERT trigger on messages that maintains it row by row (held off during import pages). */
  readonly trigger: string;
  /** Build it for the messages with `from <= id <= to` that lack it (idempotent). */
  build(from: number, to: number): Op<void>;
}

/** The indexed text, as the triggers of drizzle/sqlite/0002_fts5_search.sql compute it (Hermes' FTS_SQL). */
const FTS_TEXT = sql.raw(
  `COALESCE(m.content, '') || ' ' || COALESCE(m.tool_name, '') || ' ' || COALESCE(m.tool_calls, '')`,
);

function fts5Index(table: string): DeferredStructure['build'] {
  const fts = sql.raw(table);
  return function* (from, to) {
    const indexed = yield* first(sql`SELECT rowid FROM ${fts} WHERE rowid BETWEEN ${from} AND ${to} LIMIT 1`);
    const missing: SQL = indexed ? sql`AND NOT EXISTS (SELECT 1 FROM ${fts} f WHERE f.rowid = m.id)` : sql``;
    yield* exec(sql`INSERT INTO ${fts}(rowid, content) SELECT m.id, ${FTS_TEXT} FROM messages m
                    WHERE m.id BETWEEN ${from} AND ${to} ${missing} ORDER BY m.id`);
  };
}

const DEFERRED: readonly DeferredStructure[] = [
  { trigger: 'messages_fts_insert', build: fts5Index('messages_fts') },
  { trigger: 'messages_fts_trigram_insert', build: fts5Index('messages_fts_trigram') },
];

const TRIGGER_NAMES = sql.join(
  DEFERRED.map((d) => sql`${d.trigger}`),
  sql`, `,
);

/** The deferred triggers present in the database, with their stored CREATE TRIGGER text. */
function* presentTriggers(): Op<Array<{ name: string; sql: string }>> {
  return yield* rows<{ name: string; sql: string }>(
    sql`SELECT name, sql FROM sqlite_master WHERE type = 'trigger' AND tbl_name = 'messages' AND name IN (${TRIGGER_NAMES})`,
  );
}

/**
 * Run `insert` (an import page into messages) with the deferred triggers held off: dropped and created again
 * from their own stored SQL within the caller's transaction, so only this transaction ever runs without them.
 */
export function* withDeferredTriggers(insert: Op<void>): Op<void> {
  const held = yield* presentTriggers();
  for (const t of held) yield* exec(sql`DROP TRIGGER ${sql.identifier(t.name)}`);
  yield* insert;
  for (const t of held) yield* exec(sql.raw(t.sql));
}

/**
 * Build the deferred structures for the next at most `limit` messages with `after < id <= last` (one
 * transaction's worth): the last id covered, or null when no message is left in the range. Only structures
 * whose trigger exists are built (a store opened without its search structures gets none, as before).
 */
export function* buildDeferredChunk(after: number, last: number, limit: number): Op<number | null> {
  const end = yield* first<{ end: number | null }>(
    sql`SELECT max(id) AS "end" FROM (SELECT id FROM messages WHERE id > ${after} AND id <= ${last} ORDER BY id LIMIT ${limit})`,
  );
  if (end?.end === null || end?.end === undefined) return null;
  const present = new Set((yield* presentTriggers()).map((t) => t.name));
  for (const d of DEFERRED) if (present.has(d.trigger)) yield* d.build(after + 1, Number(end.end));
  return Number(end.end);
}
