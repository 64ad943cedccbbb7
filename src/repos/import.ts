/**
 * Bulk writes for importing a Hermes state.db or copying a store: rows keep their ids, timestamps and
 * counters. Sessions and messages go through the dialect's bulkInsert (positional statements of up to
 * 32,000 parameters on SQLite; one JSON parameter per 5,000 rows on Postgres). Every insert is ON
 * CONFLICT DO NOTHING, so running an import again (after a crash, say) adds only what is missing.
 */
import { sql } from 'drizzle-orm';
import type { BulkColumn, BulkType } from '../db/dialect.js';
import { exec, rows as queryRows } from '../db/ops.js';
import type { RepoContext } from './context.js';

export type RawRow = Record<string, unknown>;

/** How a raw column value is read (verify normalises a source with the same rules, so they cannot drift). */
export const rawText = (v: unknown) => (v === null || v === undefined ? null : String(v));
export const rawNumber = (v: unknown) => (v === null || v === undefined || v === '' ? null : Number(v));
/** Counters: a missing column or NULL (older layouts) counts as 0. */
export const rawCount = (v: unknown) => rawNumber(v) ?? 0;
const str = rawText;
const num = rawNumber;
const count = rawCount;

const SESSION_COLUMNS: BulkColumn[] = [
  ['id', 'text'],
  ['source', 'text'],
  ['user_id', 'text'],
  ['model', 'text'],
  ['model_config', 'json'],
  ['system_prompt', 'free'],
  ['started_at', 'time'],
  ['ended_at', 'time'],
  ['end_reason', 'text'],
  ['message_count', 'int'],
  ['tool_call_count', 'int'],
  ['input_tokens', 'int'],
  ['output_tokens', 'int'],
  ['cache_read_tokens', 'int'],
  ['cache_write_tokens', 'int'],
  ['reasoning_tokens', 'int'],
  ['billing_provider', 'text'],
  ['billing_base_url', 'text'],
  ['billing_mode', 'text'],
  ['estimated_cost_usd', 'real'],
  ['actual_cost_usd', 'real'],
  ['cost_status', 'text'],
  ['cost_source', 'text'],
  ['pricing_version', 'text'],
  ['title', 'text'],
  ['api_call_count', 'int'],
  ['handoff_state', 'text'],
  ['handoff_platform', 'text'],
  ['handoff_error', 'text'],
].map(([name, type]) => ({ name: name!, type: type as BulkType }));

/** Message columns before the content column(s), which differ by dialect. */
const MESSAGE_COLUMNS: BulkColumn[] = [
  ['id', 'int'],
  ['session_id', 'text'],
  ['role', 'text'],
  ['tool_call_id', 'free'],
  ['tool_calls', 'json'],
  ['tool_name', 'free'],
  ['timestamp', 'time'],
  ['token_count', 'int'],
  ['finish_reason', 'free'],
  ['reasoning', 'free'],
  ['reasoning_content', 'free'],
  ['reasoning_details', 'json'],
  ['codex_reasoning_items', 'json'],
  ['codex_message_items', 'json'],
].map(([name, type]) => ({ name: name!, type: type as BulkType }));

/**
 * Messages per transaction of the deferred build: ~0.13 s of FTS5 work here (other writers wait for one chunk
 * at most; an in-memory store, which has no worker, blocks its loop that long, as an import page did before).
 * Fewer, larger chunks cost a little less in all (one FTS5 segment per commit): 20,000 saves ~5 %.
 */
const DEFERRED_CHUNK = 10_000;

/**
 * New arrays of `width` nulls, copied from a template instead of written as an array literal. V8 "pretenures"
 * an allocation site whose objects survive young-generation collections, as a page's rows do (they live until
 * its transaction commits): every later page's rows are then allocated in the old generation, which only a
 * full GC frees, and that garbage keeps each page's strings alive through the young collections too. A
 * 200,000-message SQLite import peaked at ~320 MiB RSS in about half the runs, ~225 MiB otherwise (and
 * always with --no-allocation-site-pretenuring, or with rows made this way). Array.prototype.slice has no
 * allocation site.
 */
function rowMaker(width: number): () => unknown[] {
  const template: unknown[] = Array.from({ length: width }, () => null);
  return () => template.slice();
}

export class ImportRepo {
  constructor(private readonly ctx: RepoContext) {}

  /** Sessions with every column as stored; parents are linked afterwards (they may come later in the file). */
  insertSessions(rows: RawRow[]): Promise<void> {
    const { d } = this.ctx;
    const values = rows.map((r) => [
      str(r.id),
      str(r.source) ?? 'unknown',
      str(r.user_id),
      str(r.model),
      str(r.model_config),
      str(r.system_prompt),
      num(r.started_at) ?? 0,
      num(r.ended_at),
      str(r.end_reason),
      count(r.message_count),
      count(r.tool_call_count),
      count(r.input_tokens),
      count(r.output_tokens),
      count(r.cache_read_tokens),
      count(r.cache_write_tokens),
      count(r.reasoning_tokens),
      str(r.billing_provider),
      str(r.billing_base_url),
      str(r.billing_mode),
      num(r.estimated_cost_usd),
      num(r.actual_cost_usd),
      str(r.cost_status),
      str(r.cost_source),
      str(r.pricing_version),
      str(r.title),
      count(r.api_call_count),
      str(r.handoff_state),
      str(r.handoff_platform),
      str(r.handoff_error),
    ]);
    return d.maintain(() => d.bulkInsert('sessions', SESSION_COLUMNS, values, 'ON CONFLICT (id) DO NOTHING'));
  }

  /** Set parent links (only where still unset, so a re-run changes nothing). */
  linkParents(links: Array<[string, string]>): Promise<void> {
    const { d } = this.ctx;
    return d.write(function* () {
      for (const [id, parent] of links) {
        yield* exec(sql`UPDATE ${d.t.sessions} SET parent_session_id = ${d.text(parent)}
                        WHERE id = ${d.text(id)} AND parent_session_id IS NULL
                          AND EXISTS (SELECT 1 FROM ${d.t.sessions} p WHERE p.id = ${d.text(parent)})`);
      }
    });
  }

  /** Messages with their ids, timestamps and stored JSON. */
  insertMessages(rows: RawRow[]): Promise<void> {
    const { d } = this.ctx;
    const columns = [...MESSAGE_COLUMNS, ...d.bulkContent.columns];
    const row = rowMaker(columns.length);
    // In MESSAGE_COLUMNS order, then the content column(s).
    const values = rows.map((r) => {
      const v = row();
      v[0] = num(r.id);
      v[1] = str(r.session_id);
      v[2] = str(r.role) ?? 'unknown';
      v[3] = str(r.tool_call_id);
      v[4] = str(r.tool_calls);
      v[5] = str(r.tool_name);
      v[6] = num(r.timestamp) ?? 0;
      v[7] = num(r.token_count);
      v[8] = str(r.finish_reason);
      v[9] = str(r.reasoning);
      v[10] = str(r.reasoning_content);
      v[11] = str(r.reasoning_details);
      v[12] = str(r.codex_reasoning_items);
      v[13] = str(r.codex_message_items);
      const content = d.bulkContent.values(str(r.content));
      for (let i = 0; i < content.length; i++) v[MESSAGE_COLUMNS.length + i] = content[i];
      return v;
    });
    // A page of thousands of rows is written off the event loop; what is cheaper built once at the end (the
    // SQLite search indexes) is built by buildDeferred.
    return d.maintain(() => d.bulkInsertMessages(columns, values, 'ON CONFLICT (id) DO NOTHING'));
  }

  /**
   * Build what insertMessages held off (sql/sqlite-derived.ts) for the messages with `firstId <= id <= lastId`
   * that lack it: a chunk of rows per transaction, off the event loop, so other writers wait for one chunk at
   * most. Idempotent: after an interrupted import, running it again over the same ids adds what is missing.
   */
  async buildDeferred(firstId: number, lastId: number): Promise<void> {
    const { d } = this.ctx;
    for (let after = firstId - 1; ; ) {
      const covered = await d.maintain(() => d.buildDeferredChunk(after, lastId, DEFERRED_CHUNK));
      if (covered === null || covered >= lastId) return;
      after = covered;
    }
  }

  insertMeta(rows: RawRow[]): Promise<void> {
    const { d } = this.ctx;
    return d.write(function* () {
      for (const r of rows) {
        yield* exec(
          sql`INSERT INTO ${d.t.stateMeta} ("key", value) VALUES (${d.text(str(r.key))}, ${d.text(str(r.value))}) ${d.onConflict(['"key"'])}`,
        );
      }
    });
  }

  insertTopics(modes: RawRow[], bindings: RawRow[]): Promise<void> {
    const { d } = this.ctx;
    const bool = (v: unknown) => (v === null || v === undefined ? null : Boolean(Number(v)));
    return d.write(function* () {
      for (const r of modes) {
        yield* exec(sql`INSERT INTO ${d.t.telegramDmTopicMode} (chat_id, user_id, enabled, activated_at, updated_at, has_topics_enabled,
            allows_users_to_create_topics, capability_checked_at, intro_message_id, pinned_message_id)
          VALUES (${d.text(str(r.chat_id))}, ${d.text(str(r.user_id))}, ${d.bool(bool(r.enabled) ?? true)}, ${d.time(num(r.activated_at) ?? 0)},
            ${d.time(num(r.updated_at) ?? 0)}, ${d.bool(bool(r.has_topics_enabled))}, ${d.bool(bool(r.allows_users_to_create_topics))},
            ${d.time(num(r.capability_checked_at))}, ${d.text(str(r.intro_message_id))}, ${d.text(str(r.pinned_message_id))})
          ${d.onConflict(['chat_id'])}`);
      }
      for (const r of bindings) {
        yield* exec(sql`INSERT INTO ${d.t.telegramDmTopicBindings} (chat_id, thread_id, user_id, session_key, session_id, managed_mode, linked_at, updated_at)
          VALUES (${d.text(str(r.chat_id))}, ${d.text(str(r.thread_id))}, ${d.text(str(r.user_id))}, ${d.text(str(r.session_key))},
            ${d.text(str(r.session_id))}, ${d.text(str(r.managed_mode) ?? 'auto')}, ${d.time(num(r.linked_at) ?? 0)}, ${d.time(num(r.updated_at) ?? 0)})
          ${d.onConflict(['chat_id', 'thread_id'], [], true)}`);
      }
    });
  }

  /** The target's version of these sessions: id, source, started_at (to tell a re-run from a collision). */
  existingSessions(ids: string[]): Promise<Array<{ id: string; source: string; startedAt: number }>> {
    const { d } = this.ctx;
    return d.read(function* () {
      const found = yield* queryRows(
        sql`SELECT id, source, started_at FROM ${d.t.sessions} WHERE id IN (${sql.join(
          ids.map((i) => d.text(i)),
          sql`, `,
        )})`,
      );
      return found.map((r) => ({ id: String(r.id), source: String(r.source), startedAt: d.decode.time(r.started_at) }));
    });
  }

  /** The target's version of these messages: id, session_id, role, timestamp. */
  existingMessages(ids: number[]): Promise<Array<{ id: number; sessionId: string; role: string; timestamp: number }>> {
    const { d } = this.ctx;
    return d.read(function* () {
      const found = yield* queryRows(
        sql`SELECT id, session_id, role, timestamp FROM ${d.t.messages} WHERE id IN (${sql.join(
          ids.map((i) => d.int(i)),
          sql`, `,
        )})`,
      );
      return found.map((r) => ({
        id: d.decode.int(r.id),
        sessionId: String(r.session_id),
        role: String(r.role),
        timestamp: d.decode.time(r.timestamp),
      }));
    });
  }

  /**
   * Before the pages: move the message id sequence to at least `maxId`, so that an append by anyone else
   * during the import takes an id above the source's (it would otherwise take one of them, and the imported
   * row with that id would be skipped as already present).
   */
  reserveIds(maxId: number): Promise<void> {
    return this.ctx.d.write(() => this.ctx.d.reserveMessageIds(maxId));
  }

  /** Move the message id sequence past the imported ids (Postgres; SQLite's AUTOINCREMENT follows by itself). */
  advanceIds(): Promise<void> {
    return this.ctx.d.write(this.ctx.d.advanceMessageIds);
  }
}
