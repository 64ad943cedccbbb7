/**
 * Bulk writes for importing a Hermes state.db: rows keep their ids, timestamps and counters. Every insert
 * is ON CONFLICT DO NOTHING, so running an import again (after a crash, say) adds only what is missing.
 */
import { type SQL, sql } from 'drizzle-orm';
import { exec, rows as queryRows } from '../db/ops.js';
import type { RepoContext } from './context.js';

export type RawRow = Record<string, unknown>;

const str = (v: unknown) => (v === null || v === undefined ? null : String(v));
const num = (v: unknown) => (v === null || v === undefined || v === '' ? null : Number(v));
const count = (v: unknown) => num(v) ?? 0;

/** Rows per statement: 31 parameters a session row keeps this under SQLite's 32,766 and Postgres' 65,535. */
const BATCH = 500;

function* batches<T>(rows: T[]): Generator<T[]> {
  for (let i = 0; i < rows.length; i += BATCH) yield rows.slice(i, i + BATCH);
}

export class ImportRepo {
  constructor(private readonly ctx: RepoContext) {}

  /** Sessions with every column as stored; parents are linked afterwards (they may come later in the file). */
  insertSessions(rows: RawRow[]): Promise<void> {
    const { d } = this.ctx;
    const statements: SQL[] = [];
    for (const chunk of batches(rows)) {
      const values = chunk.map(
        (r) => sql`(${d.text(str(r.id))}, ${d.text(str(r.source) ?? 'unknown')}, ${d.text(str(r.user_id))}, ${d.text(str(r.model))},
          ${d.jsonFromText(str(r.model_config))}, ${d.text(str(r.system_prompt))}, ${d.time(num(r.started_at) ?? 0)}, ${d.time(num(r.ended_at))},
          ${d.text(str(r.end_reason))}, ${d.int(count(r.message_count))}, ${d.int(count(r.tool_call_count))}, ${d.int(count(r.input_tokens))},
          ${d.int(count(r.output_tokens))}, ${d.int(count(r.cache_read_tokens))}, ${d.int(count(r.cache_write_tokens))},
          ${d.int(count(r.reasoning_tokens))}, ${d.text(str(r.billing_provider))}, ${d.text(str(r.billing_base_url))}, ${d.text(str(r.billing_mode))},
          ${d.real(num(r.estimated_cost_usd))}, ${d.real(num(r.actual_cost_usd))}, ${d.text(str(r.cost_status))}, ${d.text(str(r.cost_source))},
          ${d.text(str(r.pricing_version))}, ${d.text(str(r.title))}, ${d.int(count(r.api_call_count))}, ${d.text(str(r.handoff_state))},
          ${d.text(str(r.handoff_platform))}, ${d.text(str(r.handoff_error))})`,
      );
      statements.push(sql`INSERT INTO sessions (id, source, user_id, model, model_config, system_prompt, started_at, ended_at, end_reason,
          message_count, tool_call_count, input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, reasoning_tokens,
          billing_provider, billing_base_url, billing_mode, estimated_cost_usd, actual_cost_usd, cost_status, cost_source,
          pricing_version, title, api_call_count, handoff_state, handoff_platform, handoff_error)
        VALUES ${sql.join(values, sql`, `)} ON CONFLICT (id) DO NOTHING`);
    }
    return d.write(function* () {
      for (const s of statements) yield* exec(s);
    });
  }

  /** Set parent links (only where still unset, so a re-run changes nothing). */
  linkParents(links: Array<[string, string]>): Promise<void> {
    const { d } = this.ctx;
    return d.write(function* () {
      for (const [id, parent] of links) {
        yield* exec(sql`UPDATE sessions SET parent_session_id = ${d.text(parent)}
                        WHERE id = ${d.text(id)} AND parent_session_id IS NULL
                          AND EXISTS (SELECT 1 FROM sessions p WHERE p.id = ${d.text(parent)})`);
      }
    });
  }

  /** Messages with their ids, timestamps and stored JSON. */
  insertMessages(rows: RawRow[]): Promise<void> {
    const { d } = this.ctx;
    const statements: SQL[] = [];
    for (const chunk of batches(rows)) {
      let columns: SQL | undefined;
      const values = chunk.map((r) => {
        const content = d.contentFromStored(str(r.content));
        columns ??= content.columns;
        return sql`(${d.int(num(r.id))}, ${d.text(str(r.session_id))}, ${d.text(str(r.role) ?? 'unknown')}, ${d.text(str(r.tool_call_id))},
          ${d.jsonFromText(str(r.tool_calls))}, ${d.text(str(r.tool_name))}, ${d.time(num(r.timestamp) ?? 0)}, ${d.int(num(r.token_count))},
          ${d.text(str(r.finish_reason))}, ${d.text(str(r.reasoning))}, ${d.text(str(r.reasoning_content))},
          ${d.jsonFromText(str(r.reasoning_details))}, ${d.jsonFromText(str(r.codex_reasoning_items))},
          ${d.jsonFromText(str(r.codex_message_items))}, ${content.values})`;
      });
      statements.push(sql`INSERT INTO messages (id, session_id, role, tool_call_id, tool_calls, tool_name, timestamp, token_count,
          finish_reason, reasoning, reasoning_content, reasoning_details, codex_reasoning_items, codex_message_items, ${columns!})
        VALUES ${sql.join(values, sql`, `)} ON CONFLICT (id) DO NOTHING`);
    }
    return d.write(function* () {
      for (const s of statements) yield* exec(s);
    });
  }

  insertMeta(rows: RawRow[]): Promise<void> {
    const { d } = this.ctx;
    return d.write(function* () {
      for (const r of rows) {
        yield* exec(sql`INSERT INTO state_meta (key, value) VALUES (${d.text(str(r.key))}, ${d.text(str(r.value))}) ON CONFLICT (key) DO NOTHING`);
      }
    });
  }

  insertTopics(modes: RawRow[], bindings: RawRow[]): Promise<void> {
    const { d } = this.ctx;
    const bool = (v: unknown) => (v === null || v === undefined ? null : Boolean(Number(v)));
    return d.write(function* () {
      for (const r of modes) {
        yield* exec(sql`INSERT INTO telegram_dm_topic_mode (chat_id, user_id, enabled, activated_at, updated_at, has_topics_enabled,
            allows_users_to_create_topics, capability_checked_at, intro_message_id, pinned_message_id)
          VALUES (${d.text(str(r.chat_id))}, ${d.text(str(r.user_id))}, ${d.bool(bool(r.enabled) ?? true)}, ${d.time(num(r.activated_at) ?? 0)},
            ${d.time(num(r.updated_at) ?? 0)}, ${d.bool(bool(r.has_topics_enabled))}, ${d.bool(bool(r.allows_users_to_create_topics))},
            ${d.time(num(r.capability_checked_at))}, ${d.text(str(r.intro_message_id))}, ${d.text(str(r.pinned_message_id))})
          ON CONFLICT (chat_id) DO NOTHING`);
      }
      for (const r of bindings) {
        yield* exec(sql`INSERT INTO telegram_dm_topic_bindings (chat_id, thread_id, user_id, session_key, session_id, managed_mode, linked_at, updated_at)
          VALUES (${d.text(str(r.chat_id))}, ${d.text(str(r.thread_id))}, ${d.text(str(r.user_id))}, ${d.text(str(r.session_key))},
            ${d.text(str(r.session_id))}, ${d.text(str(r.managed_mode) ?? 'auto')}, ${d.time(num(r.linked_at) ?? 0)}, ${d.time(num(r.updated_at) ?? 0)})
          ON CONFLICT DO NOTHING`);
      }
    });
  }

  /** The target's version of these sessions: id, source, started_at (to tell a re-run from a collision). */
  existingSessions(ids: string[]): Promise<Array<{ id: string; source: string; startedAt: number }>> {
    const { d } = this.ctx;
    return d.read(function* () {
      const found = yield* queryRows(sql`SELECT id, source, started_at FROM sessions WHERE id IN (${sql.join(ids.map((i) => d.text(i)), sql`, `)})`);
      return found.map((r) => ({ id: String(r.id), source: String(r.source), startedAt: d.decode.time(r.started_at) }));
    });
  }

  /** The target's version of these messages: id, session_id, role, timestamp. */
  existingMessages(ids: number[]): Promise<Array<{ id: number; sessionId: string; role: string; timestamp: number }>> {
    const { d } = this.ctx;
    return d.read(function* () {
      const found = yield* queryRows(sql`SELECT id, session_id, role, timestamp FROM messages WHERE id IN (${sql.join(ids.map((i) => d.int(i)), sql`, `)})`);
      return found.map((r) => ({ id: d.decode.int(r.id), sessionId: String(r.session_id), role: String(r.role), timestamp: d.decode.time(r.timestamp) }));
    });
  }

  /** Move the message id sequence past the imported ids (Postgres; SQLite's AUTOINCREMENT follows by itself). */
  advanceIds(): Promise<void> {
    return this.ctx.d.write(this.ctx.d.advanceMessageIds);
  }
}
