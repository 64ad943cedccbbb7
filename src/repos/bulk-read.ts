/**
 * Reading a store's rows out in Hermes' stored form (snake_case, epoch-second times, JSON as text,
 * structured content as "\x00json:" + JSON), so that copying a store goes through the same bulk writer
 * as importing a Hermes state.db. Messages are read in id order, a page at a time.
 */
import { sql } from 'drizzle-orm';
import { first, rows as queryRows } from '../db/ops.js';
import type { RepoContext } from './context.js';
import type { RawRow } from './import.js';

const SESSION_TIMES = ['started_at', 'ended_at'];
const SESSION_JSON = ['model_config'];
const SESSION_PLAIN = [
  'id',
  'source',
  'user_id',
  'model',
  'system_prompt',
  'parent_session_id',
  'end_reason',
  'message_count',
  'tool_call_count',
  'input_tokens',
  'output_tokens',
  'cache_read_tokens',
  'cache_write_tokens',
  'reasoning_tokens',
  'billing_provider',
  'billing_base_url',
  'billing_mode',
  'estimated_cost_usd',
  'actual_cost_usd',
  'cost_status',
  'cost_source',
  'pricing_version',
  'title',
  'api_call_count',
  'handoff_state',
  'handoff_platform',
  'handoff_error',
];
/** Free text, which Postgres stores escaped (db/pg/nul-escape.ts) and Hermes' form holds as it is. */
const SESSION_FREE = ['system_prompt'];
const MESSAGE_FREE = ['tool_call_id', 'tool_name', 'finish_reason', 'reasoning', 'reasoning_content'];
const MESSAGE_JSON = ['tool_calls', 'reasoning_details', 'codex_reasoning_items', 'codex_message_items'];
const MESSAGE_PLAIN = [
  'id',
  'session_id',
  'role',
  'tool_call_id',
  'tool_name',
  'timestamp',
  'token_count',
  'finish_reason',
  'reasoning',
  'reasoning_content',
];

export class BulkReadRepo {
  constructor(private readonly ctx: RepoContext) {}

  private select(plain: string[], json: string[], extra?: ReturnType<typeof sql.raw>) {
    const { d } = this.ctx;
    return sql.join(
      [...plain.map((c) => sql.raw(`"${c}"`)), ...json.map((c) => d.storedJson(c)), ...(extra ? [extra] : [])],
      sql`, `,
    );
  }

  private time(row: RawRow, key: string): void {
    if (row[key] !== null && row[key] !== undefined) row[key] = this.ctx.d.decode.time(row[key]);
  }

  /** Free text and JSON text as Hermes stores them. */
  private stored(row: RawRow, free: string[], json: string[]): void {
    const { decode } = this.ctx.d;
    for (const k of free) row[k] = decode.freeText(row[k]);
    for (const k of json) row[k] = decode.jsonText(row[k]);
  }

  /** Every session, by id. */
  sessions(): Promise<RawRow[]> {
    const { d, run } = this.ctx;
    const columns = this.select([...SESSION_PLAIN, ...SESSION_TIMES], SESSION_JSON);
    return run
      .read(function* () {
        return yield* queryRows(sql`SELECT ${columns} FROM ${d.t.sessions} ORDER BY id`);
      })
      .then((rows) =>
        rows.map((r) => {
          for (const k of SESSION_TIMES) this.time(r, k);
          this.stored(r, SESSION_FREE, SESSION_JSON);
          return r;
        }),
      );
  }

  /** Up to `limit` messages with ids above `afterId`, in id order. */
  messagePage(afterId: number, limit: number): Promise<RawRow[]> {
    const { d, run } = this.ctx;
    const columns = this.select(MESSAGE_PLAIN, MESSAGE_JSON, d.storedContentColumns);
    return run
      .read(function* () {
        return yield* queryRows(
          sql`SELECT ${columns} FROM ${d.t.messages} WHERE id > ${d.int(afterId)} ORDER BY id LIMIT ${d.int(limit)}`,
        );
      })
      .then((rows) =>
        rows.map((r) => {
          this.time(r, 'timestamp');
          r.id = d.decode.int(r.id);
          this.stored(r, MESSAGE_FREE, MESSAGE_JSON);
          r.content = d.decode.storedContent(r);
          delete r.content_json;
          return r;
        }),
      );
  }

  maxMessageId(): Promise<number | null> {
    const { d, run } = this.ctx;
    return run.read(function* () {
      return d.decode.intOrNull((yield* first<{ n: unknown }>(sql`SELECT MAX(id) AS n FROM ${d.t.messages}`))?.n);
    });
  }

  messageCount(): Promise<number> {
    const { d, run } = this.ctx;
    return run.read(function* () {
      return d.decode.int((yield* first<{ n: unknown }>(sql`SELECT COUNT(*) AS n FROM ${d.t.messages}`))?.n);
    });
  }

  meta(): Promise<RawRow[]> {
    const { d, run } = this.ctx;
    return run.read(function* () {
      return yield* queryRows(sql`SELECT "key", value FROM ${d.t.stateMeta} ORDER BY "key"`);
    });
  }

  topicModes(): Promise<RawRow[]> {
    const { d, run } = this.ctx;
    return run
      .read(function* () {
        return yield* queryRows(sql`SELECT * FROM ${d.t.telegramDmTopicMode} ORDER BY chat_id`);
      })
      .then((rows) =>
        rows.map((r) => {
          for (const k of ['activated_at', 'updated_at', 'capability_checked_at']) this.time(r, k);
          return r;
        }),
      );
  }

  topicBindings(): Promise<RawRow[]> {
    const { d, run } = this.ctx;
    return run
      .read(function* () {
        return yield* queryRows(sql`SELECT * FROM ${d.t.telegramDmTopicBindings} ORDER BY chat_id, thread_id`);
      })
      .then((rows) =>
        rows.map((r) => {
          for (const k of ['linked_at', 'updated_at']) this.time(r, k);
          return r;
        }),
      );
  }
}
