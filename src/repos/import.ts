/**
 * Bulk writes for importing a Hermes state.db or copying a store: rows keep their ids, timestamps and
 * counters. Sessions and messages go through the dialect's bulkInsert (positional statements of up to
 * 32,000 parameters on SQLite; one JSON parameter per 5,000 rows on Postgres). Every insert is ON
 * CONFLICT DO NOTHING, so running an import again (after a crash, say) adds only what is missing.
 */
import { sql } from 'drizzle-orm';
import {
  type BulkLimits,
  STATEMENT_OVERHEAD_BYTES,
  type UnfitValue,
  rowBytes,
  unfitReason,
  valueBytes,
} from '../db/bulk-fit.js';
import type { BulkColumn, BulkType } from '../db/dialect.js';
import { exec, rows as queryRows } from '../db/ops.js';
import { type RepoContext, catchUpSearch } from './context.js';

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

const columns = (list: Array<[string, BulkType]>): BulkColumn[] => list.map(([name, type]) => ({ name, type }));
const META_COLUMNS = columns([
  ['key', 'text'],
  ['value', 'free'],
]);
const TOPIC_MODE_COLUMNS = columns([
  ['chat_id', 'text'],
  ['user_id', 'text'],
  ['enabled', 'bool'],
  ['activated_at', 'time'],
  ['updated_at', 'time'],
  ['has_topics_enabled', 'bool'],
  ['allows_users_to_create_topics', 'bool'],
  ['capability_checked_at', 'time'],
  ['intro_message_id', 'text'],
  ['pinned_message_id', 'text'],
]);
const TOPIC_BINDING_COLUMNS = columns([
  ['chat_id', 'text'],
  ['thread_id', 'text'],
  ['user_id', 'text'],
  ['session_key', 'text'],
  ['session_id', 'text'],
  ['managed_mode', 'text'],
  ['linked_at', 'time'],
  ['updated_at', 'time'],
]);

/** A session row's values in SESSION_COLUMNS order. */
function sessionValues(r: RawRow): unknown[] {
  return [
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
  ];
}

const bool = (v: unknown) => (v === null || v === undefined ? null : Boolean(Number(v)));
const metaValues = (r: RawRow): [string | null, string | null] => [str(r.key), str(r.value)];
/** A topic mode row's values in TOPIC_MODE_COLUMNS order. */
const topicModeValues = (r: RawRow) =>
  [
    str(r.chat_id),
    str(r.user_id),
    bool(r.enabled),
    num(r.activated_at) ?? 0,
    num(r.updated_at) ?? 0,
    bool(r.has_topics_enabled),
    bool(r.allows_users_to_create_topics),
    num(r.capability_checked_at),
    str(r.intro_message_id),
    str(r.pinned_message_id),
  ] as const;
/** A topic binding row's values in TOPIC_BINDING_COLUMNS order. */
const topicBindingValues = (r: RawRow) =>
  [
    str(r.chat_id),
    str(r.thread_id),
    str(r.user_id),
    str(r.session_key),
    str(r.session_id),
    str(r.managed_mode) ?? 'auto',
    num(r.linked_at) ?? 0,
    num(r.updated_at) ?? 0,
  ] as const;

/** The tables an import or copy writes, as named in an UnfitValue. */
export type TransferTable =
  | 'sessions'
  | 'messages'
  | 'state_meta'
  | 'telegram_dm_topic_mode'
  | 'telegram_dm_topic_bindings';

/** An offending value as an error shows it: numbers as they are, text cut to its first 40 characters. */
function shown(value: unknown): unknown {
  return typeof value === 'string' && value.length > 40 ? `${value.slice(0, 40)}…` : value;
}

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
    const { d, run } = this.ctx;
    const values = rows.map(sessionValues);
    return run.maintain(() => d.bulkInsert('sessions', SESSION_COLUMNS, values, 'ON CONFLICT (id) DO NOTHING'));
  }

  /** Set parent links (only where still unset, so a re-run changes nothing). */
  linkParents(links: Array<[string, string]>): Promise<void> {
    const { d, run } = this.ctx;
    return run.write(function* () {
      for (const [id, parent] of links) {
        yield* exec(sql`UPDATE ${d.t.sessions} SET parent_session_id = ${d.text(parent)}
                        WHERE id = ${d.text(id)} AND parent_session_id IS NULL
                          AND EXISTS (SELECT 1 FROM ${d.t.sessions} p WHERE p.id = ${d.text(parent)})`);
      }
    });
  }

  /** Messages with their ids, timestamps and stored JSON. */
  insertMessages(rows: RawRow[]): Promise<void> {
    const { d, run } = this.ctx;
    const { columns, values } = this.messageValues(rows);
    // A page of thousands of rows is written off the event loop; what is cheaper built once at the end (the
    // SQLite search indexes) is built by buildDeferred.
    return run.maintain(() => d.bulkInsertMessages(columns, values, 'ON CONFLICT (id) DO NOTHING'));
  }

  /** The bulkInsert columns and values of these messages, in MESSAGE_COLUMNS order, then the content column(s). */
  private messageValues(rows: RawRow[]): { columns: BulkColumn[]; values: unknown[][] } {
    const { d } = this.ctx;
    const columns = [...MESSAGE_COLUMNS, ...d.bulkContent.columns];
    const row = rowMaker(columns.length);
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
    return { columns, values };
  }

  /** What the store's columns hold (db/bulk-fit.ts), asked of the database once per transfer. */
  limits(): Promise<BulkLimits> {
    const { d, run } = this.ctx;
    return run.read(() => d.bulkLimits());
  }

  /**
   * The values of these rows, as the inserts above would write them, that the store cannot hold: added to
   * `found` (at most `keep` of them); the number of them is returned.
   */
  unfit(kind: TransferTable, rows: RawRow[], limits: BulkLimits, found: UnfitValue[], keep: number): number {
    if (rows.length === 0) return 0;
    let columns: readonly BulkColumn[];
    let values: readonly (readonly unknown[])[];
    let ids: (r: RawRow) => string;
    if (kind === 'messages') {
      ({ columns, values } = this.messageValues(rows));
      ids = (r) => String(r.id);
    } else if (kind === 'sessions') {
      columns = [...SESSION_COLUMNS, { name: 'parent_session_id', type: 'text' }];
      values = rows.map((r) => [...sessionValues(r), str(r.parent_session_id)]);
      ids = (r) => String(r.id);
    } else if (kind === 'state_meta') {
      columns = META_COLUMNS;
      values = rows.map(metaValues);
      ids = (r) => String(r.key);
    } else if (kind === 'telegram_dm_topic_mode') {
      columns = TOPIC_MODE_COLUMNS;
      values = rows.map(topicModeValues);
      ids = (r) => String(r.chat_id);
    } else {
      columns = TOPIC_BINDING_COLUMNS;
      values = rows.map(topicBindingValues);
      ids = (r) => `${String(r.chat_id)}/${String(r.thread_id)}`;
    }
    const room = limits.statementBytes === null ? null : limits.statementBytes - STATEMENT_OVERHEAD_BYTES;
    let n = 0;
    const add = (r: number, column: string, value: unknown, reason: string) => {
      n++;
      if (found.length >= keep) return;
      // The source's own value where it has the column (text that is no number shows as itself, not as NaN).
      const raw = rows[r]![column];
      found.push({ table: kind, id: ids(rows[r]!), column, value: shown(raw === undefined ? value : raw), reason });
    };
    for (let r = 0; r < values.length; r++) {
      const row = values[r]!;
      for (let c = 0; c < columns.length; c++) {
        const reason = unfitReason(limits, kind, columns[c]!, row[c]);
        if (reason !== null) add(r, columns[c]!.name, row[c], reason);
      }
      if (room !== null) {
        const bytes = rowBytes(columns, row);
        if (bytes > room) {
          // Named by its longest column, the one to look at.
          let longest = 0;
          for (let c = 1; c < columns.length; c++)
            if (valueBytes(columns[c]!.type, row[c]) > valueBytes(columns[longest]!.type, row[longest])) longest = c;
          add(
            r,
            columns[longest]!.name,
            row[longest],
            `makes the row ${bytes} bytes in an INSERT statement, more than the server's max_allowed_packet ` +
              `(${limits.statementBytes} bytes) allows: raise max_allowed_packet on the server to at least ${bytes + STATEMENT_OVERHEAD_BYTES}`,
          );
        }
      }
    }
    return n;
  }

  /**
   * Build what insertMessages held off (db/sqlite/deferred-triggers.ts) for the messages with `firstId <= id <= lastId`
   * that lack it: a chunk of rows per transaction, off the event loop, so other writers wait for one chunk at
   * most. Idempotent: after an interrupted import, running it again over the same ids adds what is missing.
   */
  async buildDeferred(firstId: number, lastId: number): Promise<void> {
    const { d, run } = this.ctx;
    for (let after = firstId - 1; ; ) {
      const covered = await run.maintain(() => d.buildDeferredChunk(after, lastId, DEFERRED_CHUNK));
      if (covered === null || covered >= lastId) return;
      after = covered;
    }
  }

  /**
   * Bring the search index up to date with what the transfer wrote, a bounded piece per transaction (Postgres
   * and PGlite: the block index, built in one pass into an empty store; MySQL: the token counts), so the
   * first search after an import does not pay for it.
   */
  indexForSearch(): Promise<void> {
    return catchUpSearch(this.ctx, 'maintain');
  }

  insertMeta(rows: RawRow[]): Promise<void> {
    const { d, run } = this.ctx;
    return run.write(function* () {
      for (const [key, value] of rows.map(metaValues)) {
        yield* exec(
          sql`INSERT INTO ${d.t.stateMeta} ("key", value) VALUES (${d.text(key)}, ${d.text(value)}) ${d.onConflict(['"key"'])}`,
        );
      }
    });
  }

  insertTopics(modes: RawRow[], bindings: RawRow[]): Promise<void> {
    const { d, run } = this.ctx;
    return run.write(function* () {
      for (const r of modes) {
        const [chatId, userId, enabled, activatedAt, updatedAt, hasTopics, allowsCreate, checkedAt, intro, pinned] =
          topicModeValues(r);
        yield* exec(sql`INSERT INTO ${d.t.telegramDmTopicMode} (chat_id, user_id, enabled, activated_at, updated_at, has_topics_enabled,
            allows_users_to_create_topics, capability_checked_at, intro_message_id, pinned_message_id)
          VALUES (${d.text(chatId)}, ${d.text(userId)}, ${d.bool(enabled ?? true)}, ${d.time(activatedAt)},
            ${d.time(updatedAt)}, ${d.bool(hasTopics)}, ${d.bool(allowsCreate)},
            ${d.time(checkedAt)}, ${d.text(intro)}, ${d.text(pinned)})
          ${d.onConflict(['chat_id'])}`);
      }
      for (const r of bindings) {
        const [chatId, threadId, userId, sessionKey, sessionId, managedMode, linkedAt, updatedAt] =
          topicBindingValues(r);
        yield* exec(sql`INSERT INTO ${d.t.telegramDmTopicBindings} (chat_id, thread_id, user_id, session_key, session_id, managed_mode, linked_at, updated_at)
          VALUES (${d.text(chatId)}, ${d.text(threadId)}, ${d.text(userId)}, ${d.text(sessionKey)},
            ${d.text(sessionId)}, ${d.text(managedMode)}, ${d.time(linkedAt)}, ${d.time(updatedAt)})
          ${d.onConflict(['chat_id', 'thread_id'], [], true)}`);
      }
    });
  }

  /** The target's version of these sessions: id, source, started_at (to tell a re-run from a collision). */
  existingSessions(ids: string[]): Promise<Array<{ id: string; source: string; startedAt: number }>> {
    const { d, run } = this.ctx;
    return run.read(function* () {
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
    const { d, run } = this.ctx;
    return run.read(function* () {
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
    return this.ctx.run.write(() => this.ctx.d.reserveMessageIds(maxId));
  }

  /** Fresh planner statistics for the tables the transfer filled (Runner.analyze). */
  analyze(): Promise<void> {
    return this.ctx.run.analyze();
  }

  /** Move the message id sequence past the imported ids (Postgres; SQLite's AUTOINCREMENT follows by itself). */
  advanceIds(): Promise<void> {
    return this.ctx.run.write(this.ctx.d.advanceMessageIds);
  }
}
