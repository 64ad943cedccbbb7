/**
 * Sessions: create/ensure (first write wins), lookups, end/reopen, token and billing counters, deletes
 * and prunes that re-parent children instead of cascading, counts and the rich listing.
 */
import { type SQL, sql } from 'drizzle-orm';
import { isTruthy } from '../codecs/json.js';
import { type Op, changes, exec, first, rows, table } from '../db/ops.js';
import { SessionNotFoundError, ValidationError } from '../errors.js';
import { escapeLike } from '../sql/like.js';
import { listingQuery, rootsAndBranches, richColumns, tipsQuery, whereAll } from '../sql/listing.js';
import type { JsonInput } from '../codecs/json.js';
import type { RichSessionRow, SessionRow } from '../types.js';
import { type RepoContext, sqlLimit } from './context.js';
import type { LineageRepo } from './lineage.js';
import { decodeRichSession, decodeSession, listedPositions, listedRowFromValues, previewFromRaw } from './rows.js';
import * as v from '../validation.js';
import type { z } from 'zod';

export interface CreateSessionFields {
  userId?: string | null;
  model?: string | null;
  modelConfig?: JsonInput | null;
  systemPrompt?: string | null;
  parentSessionId?: string | null;
}

export interface TokenCounts {
  inputTokens: number;
  outputTokens: number;
  model?: string | null;
  cacheReadTokens: number;
  cacheWriteTokens: number;
  reasoningTokens: number;
  estimatedCostUsd?: number | null;
  actualCostUsd?: number | null;
  costStatus?: string | null;
  costSource?: string | null;
  pricingVersion?: string | null;
  billingProvider?: string | null;
  billingBaseUrl?: string | null;
  billingMode?: string | null;
  apiCallCount: number;
  absolute: boolean;
}

export interface ListRichOptions {
  source?: string | null;
  excludeSources?: string[] | null;
  limit: number;
  offset: number;
  includeChildren: boolean;
  projectCompressionTips: boolean;
  orderByLastActive: boolean;
}

/** A prune batch: at most this many sessions, and messages (~45 ms of deletes with both FTS indexes on SQLite). */
const PRUNE_BATCH_SESSIONS = 500;
const PRUNE_BATCH_MESSAGES = 1000;

/** The sessions table as a regclass literal (Postgres: schema-qualified). */
export class SessionRepo {
  // The listing finds compression tips in its own statement now; the lineage parameter stays for existing callers.
  constructor(
    private readonly ctx: RepoContext,
    _lineage?: LineageRepo,
  ) {}

  /**
   * INSERT unless the id exists (first write wins). A missing parent is refused, but only for a new row.
   * Validated as createSession is.
   */
  async create(
    sessionId: string,
    source: string,
    options: z.input<typeof v.createSessionOptions> = {},
  ): Promise<string> {
    const { d, run } = this.ctx;
    const id = v.validate(v.id, sessionId, 'sessionId');
    source = v.validate(v.id, source, 'source');
    const fields: CreateSessionFields = v.validate(v.createSessionOptions, options, 'options');
    // Hermes' FK check passes for a row naming itself; refused here, since the walks would only stop at the cycle guard.
    if (fields.parentSessionId === id)
      throw new ValidationError('options.parentSessionId', 'a session cannot be its own parent');
    const startedAt = this.ctx.now();
    const modelConfig = isTruthy(fields.modelConfig) ? fields.modelConfig : null;
    const parent = fields.parentSessionId ?? null;
    return run.write(
      function* () {
        if (yield* first(sql`SELECT 1 AS hit FROM ${d.t.sessions} WHERE id = ${d.text(id)}`)) return id;
        if (
          parent !== null &&
          !(yield* first(sql`SELECT 1 AS hit FROM ${d.t.sessions} WHERE id = ${d.text(parent)}`))
        ) {
          throw new SessionNotFoundError(parent, 'parent session');
        }
        yield* exec(sql`
        INSERT INTO ${d.t.sessions} (id, source, user_id, model, model_config, system_prompt, parent_session_id, started_at)
        VALUES (${d.text(id)}, ${d.text(source)}, ${d.text(fields.userId)}, ${d.text(fields.model)}, ${d.json(modelConfig)},
                ${d.freeText(fields.systemPrompt)}, ${d.text(parent)}, ${d.time(startedAt)})
        ${d.onConflict(['id'])}`);
        return id;
      },
      { lane: id },
    );
  }

  get(id: string): Promise<SessionRow | null> {
    const { d, run } = this.ctx;
    return run.read(function* () {
      const row = yield* first(sql`SELECT * FROM ${d.t.sessions} WHERE id = ${d.text(id)}`);
      return row ? decodeSession(row, d.decode) : null;
    });
  }

  /** An exact id, or the only session whose id starts with the prefix (LIKE, wildcards escaped). */
  resolveId(idOrPrefix: string): Promise<string | null> {
    const { d, run } = this.ctx;
    return run.read(function* () {
      const exact = yield* first<{ id: string }>(sql`SELECT id FROM ${d.t.sessions} WHERE id = ${d.text(idOrPrefix)}`);
      if (exact) return String(exact.id);
      const matches = yield* rows<{ id: string }>(sql`
        SELECT id FROM ${d.t.sessions} WHERE ${d.likeAsciiCi(sql`id`, `${escapeLike(idOrPrefix)}%`)}
        ORDER BY started_at DESC LIMIT 2`);
      return matches.length === 1 ? String(matches[0]!.id) : null;
    });
  }

  /** First end wins: an ended session keeps its reason and time. */
  async end(sessionId: string, endReason: string): Promise<void> {
    const { d, run } = this.ctx;
    const id = v.validate(v.lookupId, sessionId, 'sessionId');
    endReason = v.validate(v.text, endReason, 'endReason');
    const now = this.ctx.now();
    return run.write(
      function* () {
        yield* exec(sql`UPDATE ${d.t.sessions} SET ended_at = ${d.time(now)}, end_reason = ${d.text(endReason)}
                      WHERE id = ${d.text(id)} AND ended_at IS NULL`);
      },
      { lane: id },
    );
  }

  async reopen(sessionId: string): Promise<void> {
    const { d, run } = this.ctx;
    const id = v.validate(v.lookupId, sessionId, 'sessionId');
    return run.write(
      function* () {
        yield* exec(sql`UPDATE ${d.t.sessions} SET ended_at = NULL, end_reason = NULL WHERE id = ${d.text(id)}`);
      },
      { lane: id },
    );
  }

  async updateSystemPrompt(sessionId: string, systemPrompt: string | null): Promise<void> {
    const { d, run } = this.ctx;
    const id = v.validate(v.lookupId, sessionId, 'sessionId');
    const prompt = v.validate(v.optionalFreeText, systemPrompt, 'systemPrompt') ?? null;
    return run.write(
      function* () {
        yield* exec(sql`UPDATE ${d.t.sessions} SET system_prompt = ${d.freeText(prompt)} WHERE id = ${d.text(id)}`);
      },
      { lane: id },
    );
  }

  /**
   * Hermes' counter rules. Incremental (per API call) adds; absolute (gateway totals) sets. In both, cost
   * status/source/pricing take the new value when given, billing fields keep the first value, and the
   * model is only backfilled. An unknown id gets a stub session (source 'unknown') first, in the same
   * transaction. NULL counters (only in foreign files) count from 0. Validated as updateTokenCounts is.
   */
  async updateTokenCounts(sessionId: string, options: z.input<typeof v.updateTokenCountsOptions> = {}): Promise<void> {
    const { d, run } = this.ctx;
    const id = v.validate(v.id, sessionId, 'sessionId');
    const c: TokenCounts = v.validate(v.updateTokenCountsOptions, options, 'options');
    const now = this.ctx.now();
    const common = sql`
      cost_status = COALESCE(${d.text(c.costStatus)}, cost_status),
      cost_source = COALESCE(${d.text(c.costSource)}, cost_source),
      pricing_version = COALESCE(${d.text(c.pricingVersion)}, pricing_version),
      billing_provider = COALESCE(billing_provider, ${d.text(c.billingProvider)}),
      billing_base_url = COALESCE(billing_base_url, ${d.text(c.billingBaseUrl)}),
      billing_mode = COALESCE(billing_mode, ${d.text(c.billingMode)}),
      model = COALESCE(model, ${d.text(c.model)})`;
    const counters: SQL = c.absolute
      ? sql`
        input_tokens = ${d.int(c.inputTokens)},
        output_tokens = ${d.int(c.outputTokens)},
        cache_read_tokens = ${d.int(c.cacheReadTokens)},
        cache_write_tokens = ${d.int(c.cacheWriteTokens)},
        reasoning_tokens = ${d.int(c.reasoningTokens)},
        estimated_cost_usd = COALESCE(${d.real(c.estimatedCostUsd)}, 0),
        actual_cost_usd = COALESCE(${d.real(c.actualCostUsd)}, actual_cost_usd),
        api_call_count = ${d.int(c.apiCallCount)}`
      : sql`
        input_tokens = COALESCE(input_tokens, 0) + ${d.int(c.inputTokens)},
        output_tokens = COALESCE(output_tokens, 0) + ${d.int(c.outputTokens)},
        cache_read_tokens = COALESCE(cache_read_tokens, 0) + ${d.int(c.cacheReadTokens)},
        cache_write_tokens = COALESCE(cache_write_tokens, 0) + ${d.int(c.cacheWriteTokens)},
        reasoning_tokens = COALESCE(reasoning_tokens, 0) + ${d.int(c.reasoningTokens)},
        estimated_cost_usd = COALESCE(estimated_cost_usd, 0) + COALESCE(${d.real(c.estimatedCostUsd)}, 0),
        actual_cost_usd = CASE WHEN ${d.real(c.actualCostUsd)} IS NULL THEN actual_cost_usd
                               ELSE COALESCE(actual_cost_usd, 0) + ${d.real(c.actualCostUsd)} END,
        api_call_count = COALESCE(api_call_count, 0) + ${d.int(c.apiCallCount)}`;
    return run.write(
      function* () {
        yield* exec(sql`
        INSERT INTO ${d.t.sessions} (id, source, model, started_at) VALUES (${d.text(id)}, 'unknown', ${d.text(c.model)}, ${d.time(now)})
        ${d.onConflict(['id'])}`);
        yield* exec(sql`UPDATE ${d.t.sessions} SET ${counters}, ${common} WHERE id = ${d.text(id)}`);
      },
      { lane: id },
    );
  }

  /** Delete a session and its messages; its children become roots. False when it does not exist. */
  async delete(sessionId: string): Promise<boolean> {
    const { d, run } = this.ctx;
    const id = v.validate(v.lookupId, sessionId, 'sessionId');
    // A session may hold tens of thousands of messages (and their index rows): off the event loop.
    return run.maintain(
      function* () {
        // Lock the row before deleting its messages: an append that holds it commits first and its message
        // goes with the rest; one that comes after finds no session. Never a message left without its session.
        if (!(yield* first(sql`SELECT 1 AS hit FROM ${d.t.sessions} WHERE id = ${d.text(id)}${d.forUpdate}`)))
          return false;
        yield* exec(sql`UPDATE ${d.t.sessions} SET parent_session_id = NULL WHERE parent_session_id = ${d.text(id)}`);
        yield* exec(sql`DELETE FROM ${d.t.messages} WHERE session_id = ${d.text(id)}`);
        yield* exec(sql`DELETE FROM ${d.t.sessions} WHERE id = ${d.text(id)}`);
        return true;
      },
      { lane: id },
    );
  }

  async clearMessages(sessionId: string): Promise<void> {
    const { d, run } = this.ctx;
    const id = v.validate(v.lookupId, sessionId, 'sessionId');
    return run.maintain(
      function* () {
        yield* exec(sql`DELETE FROM ${d.t.messages} WHERE session_id = ${d.text(id)}`);
        yield* exec(sql`UPDATE ${d.t.sessions} SET message_count = 0, tool_call_count = 0 WHERE id = ${d.text(id)}`);
      },
      { lane: id },
    );
  }

  /** How many sessions `prune` would delete now (for a dry run). */
  countPrunable(olderThanDays: number, source: string | null | undefined): Promise<number> {
    const { d, run } = this.ctx;
    const cutoff = this.ctx.now() - olderThanDays * 86400;
    return run.read(function* () {
      const row = yield* first<{ n: unknown }>(sql`SELECT COUNT(*) AS n FROM ${d.t.sessions} c
        WHERE c.started_at < ${d.time(cutoff)} AND c.ended_at IS NOT NULL ${source ? sql`AND c.source = ${d.text(source)}` : sql``}`);
      return d.decode.int(row?.n);
    });
  }

  /**
   * Delete ended sessions started before the cutoff (never a live one); children of pruned sessions become
   * roots. In batches of whole sessions, each its own transaction of at most PRUNE_BATCH_MESSAGES messages
   * (or one session), so other writers get the lock between batches and an interruption leaves whole
   * sessions only.
   */
  async prune(olderThanDays: number, source?: string | null): Promise<number> {
    const { d, run } = this.ctx;
    ({ olderThanDays, source } = v.validate(v.pruneOptions, { olderThanDays, source }, 'options'));
    const cutoff = this.ctx.now() - olderThanDays * 86400;
    // After the first batch, a session that got a message since the prune began was written after it was
    // requested: it is left for the next prune, so no batch undoes a write requested between two batches.
    const candidates = (since: number | undefined) => sql`SELECT c.id, COALESCE(c.message_count, 0) AS messages
      FROM ${d.t.sessions} c
      WHERE c.started_at < ${d.time(cutoff)} AND c.ended_at IS NOT NULL ${source ? sql`AND c.source = ${d.text(source)}` : sql``}
        ${since === undefined ? sql`` : sql`AND NOT EXISTS (SELECT 1 FROM ${d.t.messages} m WHERE m.session_id = c.id AND m.id > ${d.int(since)})`}
      ORDER BY ${d.binary(sql`c.id`)} LIMIT ${d.int(PRUNE_BATCH_SESSIONS)}${d.forUpdate}`;
    let lastMessageId: number | undefined;
    let batches = 0;
    let total = 0;
    for (;;) {
      const later = batches++ > 0;
      const deleted = await run.maintain(
        function* () {
          // A barrier: every write requested before the batch has committed, none requested after it has begun.
          if (!later)
            lastMessageId = d.decode.int(
              (yield* first<{ n: unknown }>(sql`SELECT COALESCE(MAX(id), 0) AS n FROM ${d.t.messages}`))?.n,
            );
          // The batch is locked (as in delete): another process's append racing it either commits first and its
          // message is pruned too, or finds no session. A session ended meanwhile is left for the next prune.
          const found = yield* rows<{ id: unknown; messages: unknown }>(candidates(later ? lastMessageId : undefined));
          const batch: string[] = [];
          let messages = 0;
          for (const c of found) {
            messages += d.decode.int(c.messages);
            if (batch.length > 0 && messages > PRUNE_BATCH_MESSAGES) break;
            batch.push(String(c.id));
          }
          if (batch.length === 0) return 0;
          const ids = sql.join(
            batch.map((id) => d.text(id)),
            sql`, `,
          );
          yield* exec(sql`UPDATE ${d.t.sessions} SET parent_session_id = NULL WHERE parent_session_id IN (${ids})`);
          yield* exec(sql`DELETE FROM ${d.t.messages} WHERE session_id IN (${ids})`);
          return yield* changes(sql`DELETE FROM ${d.t.sessions} WHERE id IN (${ids})`);
        },
        { barrier: true },
      );
      if (deleted === 0) return total;
      total += deleted;
    }
  }

  count(source: string | null | undefined): Promise<number> {
    const { d, run } = this.ctx;
    return run.read(function* () {
      const row = yield* first<{ n: unknown }>(
        source
          ? sql`SELECT COUNT(*) AS n FROM ${d.t.sessions} WHERE source = ${d.text(source)}`
          : sql`SELECT COUNT(*) AS n FROM ${d.t.sessions}`,
      );
      return d.decode.int(row?.n);
    });
  }

  /** One session with last_active and preview, or null. */
  richRow(id: string) {
    const { d } = this.ctx;
    return function* () {
      const row = yield* first(sql`SELECT ${richColumns(d)} FROM ${d.t.sessions} s WHERE s.id = ${d.text(id)}`);
      return row ? decodeRichSession(row, d.decode) : null;
    };
  }

  private maintainedColumns: boolean | undefined;

  /**
   * Whether the store has the trigger-kept activity values (d.activity: every store we migrated), looked up once.
   * A Hermes file opened with { migrate: false } has not: the listing then computes them as Hermes does.
   */
  private activityMaintained(): () => Op<boolean> {
    const self = this;
    const { d } = this.ctx;
    return function* () {
      if (self.maintainedColumns === undefined) {
        const found = yield* rows<{ name: unknown }>(d.activity.probe);
        self.maintainedColumns = found.length > 0;
      }
      return self.maintainedColumns;
    };
  }

  listRich(o: ListRichOptions): Promise<RichSessionRow[]> {
    const { d, run } = this.ctx;
    const conditions: SQL[] = [];
    if (!o.includeChildren) conditions.push(rootsAndBranches(d));
    if (o.source) conditions.push(sql`s.source = ${d.text(o.source)}`);
    if (o.excludeSources && o.excludeSources.length > 0) {
      conditions.push(
        sql`s.source NOT IN (${sql.join(
          o.excludeSources.map((s) => d.text(s)),
          sql`, `,
        )})`,
      );
    }
    const project = o.projectCompressionTips && !o.includeChildren;
    const maintained = this.activityMaintained();
    // The tips in the page's own statement, or a second statement for the compression roots only.
    const tipsInPage = project && d.tipsInListingPage;
    return run.read(function* () {
      const withColumns = yield* maintained();
      const query = listingQuery(d, {
        where: whereAll(conditions),
        limit: sqlLimit(o.limit),
        offset: o.offset,
        byActivity: o.orderByLastActive,
        withTips: tipsInPage,
        maintained: withColumns,
      });
      // As arrays with the column names (`s.*` names them only at run time): the drivers build a keyed object
      // per row far more slowly than an array, and one fixed-shape row is cheap to build here.
      const result = yield* table(query);
      const at = listedPositions(result.columns);
      const page = result.rows.map((values) => listedRowFromValues(values, at));
      if (project && !tipsInPage) {
        const roots = page.filter((r) => r.end_reason === 'compression').map((r) => String(r.id));
        if (roots.length > 0) {
          const tips = new Map((yield* rows(tipsQuery(d, roots, withColumns))).map((t) => [String(t._root), t]));
          for (const r of page) {
            const tip = tips.get(String(r.id));
            if (tip) Object.assign(r, tip);
          }
        }
      }
      return page.map((r) => {
        const row = decodeRichSession(r, d.decode);
        if (!project || r._tip_found === null || r._tip_found === undefined) return row;
        // The tip's listed values over the root's row; started_at, source, tokens and costs stay the root's.
        // Decoded as decodeRichSession decodes them (the oracle test compares with the tip's own listed row).
        // In place rather than spread into a copy (slow in V8); the same keys in the same order as a spread gave.
        const str = (v: unknown) => (v === null || v === undefined ? null : String(v));
        row.lineageRootId = row.id;
        row.id = String(r._tip_found);
        row.endedAt = d.decode.timeOrNull(r._tip_ended_at);
        row.endReason = str(r._tip_end_reason);
        row.messageCount = d.decode.int(r._tip_message_count);
        row.toolCallCount = d.decode.int(r._tip_tool_call_count);
        row.title = str(r._tip_title);
        row.lastActive = d.decode.time(r._tip_last_active);
        row.preview = previewFromRaw(d.decode.freeText(r._tip_preview_raw));
        row.model = str(r._tip_model);
        row.systemPrompt = d.decode.freeText(r._tip_system_prompt);
        return row;
      });
    });
  }
}
