/** Export (a session with its messages, or every session) and maintenance (vacuum, periodic auto-prune). */
import { pythonFloatRepr } from '../codecs/python-json.js';
import { first, rows } from '../db/ops.js';
import { sql } from 'drizzle-orm';
import { byActivity, idsByActivity } from '../sql/listing.js';
import type {
  AutoMaintenanceResult,
  MessageRow,
  SessionExport,
  SessionExportWithActivity,
  SessionRow,
} from '../types.js';
import type { RepoContext } from './context.js';
import type { MessageRepo } from './messages.js';
import type { MetaRepo } from './meta.js';
import { decodeMessage, decodeSession } from './rows.js';
import type { SessionRepo } from './sessions.js';
import * as v from '../validation.js';
import type { z } from 'zod';

export const AUTO_PRUNE_KEY = 'last_auto_prune';
/** export_all's cap in Hermes. */
export const EXPORT_ALL_LIMIT = 100_000;

export class ExportRepo {
  constructor(
    private readonly ctx: RepoContext,
    private readonly messages: MessageRepo,
  ) {}

  /** The session's columns plus its messages, or null. */
  exportSession(sessionId: string): Promise<SessionExport | null> {
    const { d, run } = this.ctx;
    const listOp = this.messages.listOpFor(sessionId);
    return run.read(function* () {
      const row = yield* first(sql`SELECT * FROM ${d.t.sessions} WHERE id = ${d.text(sessionId)}`);
      if (!row) return null;
      return { ...decodeSession(row, d.decode), messages: yield* listOp() };
    });
  }

  /** Every session (of a source), most recently active first, each with lastActive and its messages. */
  exportAll(source: string | null | undefined): Promise<SessionExportWithActivity[]> {
    const { d, run } = this.ctx;
    const listOpFor = (id: string) => this.messages.listOpFor(id);
    return run.read(function* () {
      const sessions = yield* rows(byActivity(d, source, EXPORT_ALL_LIMIT, 0));
      const out: SessionExportWithActivity[] = [];
      for (const row of sessions) {
        const session = decodeSession(row, d.decode);
        out.push({ ...session, lastActive: d.decode.time(row.last_active), messages: yield* listOpFor(session.id)() });
      }
      return out;
    });
  }

  // A streamed export (an exportAll too large to hold) reads through these, a page at a time.

  /** The ids of exportAll's sessions, in its order (most recently active first, at most EXPORT_ALL_LIMIT). */
  sessionIdsByActivity(source: string | null | undefined): Promise<string[]> {
    const { d, run } = this.ctx;
    return run.read(function* () {
      return (yield* rows<{ id: unknown }>(idsByActivity(d, source, EXPORT_ALL_LIMIT))).map((r) => String(r.id));
    });
  }

  /** A session's columns and its first `limit` messages (id order), read together; null when it is gone. */
  sessionHead(sessionId: string, limit: number): Promise<{ session: SessionRow; messages: MessageRow[] } | null> {
    const { d, run } = this.ctx;
    const page = this.messagePageOp(sessionId, 0, limit);
    return run.read(function* () {
      const row = yield* first(sql`SELECT * FROM ${d.t.sessions} WHERE id = ${d.text(sessionId)}`);
      return row ? { session: decodeSession(row, d.decode), messages: yield* page() } : null;
    });
  }

  /** Up to `limit` of a session's messages with ids above `afterId`, in id order. */
  sessionMessagePage(sessionId: string, afterId: number, limit: number): Promise<MessageRow[]> {
    return this.ctx.run.read(this.messagePageOp(sessionId, afterId, limit));
  }

  private messagePageOp(sessionId: string, afterId: number, limit: number) {
    const { d } = this.ctx;
    return function* () {
      const found = yield* rows(sql`
        SELECT ${d.messageColumns('m')} FROM ${d.t.messages} m
        WHERE m.session_id = ${d.text(sessionId)} AND m.id > ${d.int(afterId)}
        ORDER BY m.id LIMIT ${d.int(limit)}`);
      return found.map((r) => decodeMessage(r, d.decode));
    };
  }
}

export interface UsageGroup {
  /** The model or source (null when unset). */
  key: string | null;
  sessions: number;
  messages: number;
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens: number;
  cacheWriteTokens: number;
  reasoningTokens: number;
  estimatedCostUsd: number;
  actualCostUsd: number;
}

export interface StoreStats {
  sessions: number;
  messages: number;
  byModel: UsageGroup[];
  bySource: UsageGroup[];
  /** Size of the database on disk (SQLite: pages; Postgres: pg_database_size). */
  databaseBytes: number;
}

export interface AutoMaintenanceOptions {
  retentionDays: number;
  minIntervalHours: number;
  vacuum: boolean;
}

export class MaintenanceRepo {
  constructor(
    private readonly ctx: RepoContext,
    private readonly sessions: SessionRepo,
    private readonly meta: MetaRepo,
  ) {}

  vacuum(): Promise<void> {
    return this.ctx.run.vacuum();
  }

  /** Counts, token and cost totals by model and by source, and the database size. */
  stats(): Promise<StoreStats> {
    const { d, run } = this.ctx;
    const group = (column: 'model' | 'source') => sql`
      SELECT ${sql.raw(column)} AS "key", COUNT(*) AS sessions, COALESCE(SUM(message_count), 0) AS messages,
        COALESCE(SUM(input_tokens), 0) AS input_tokens, COALESCE(SUM(output_tokens), 0) AS output_tokens,
        COALESCE(SUM(cache_read_tokens), 0) AS cache_read_tokens, COALESCE(SUM(cache_write_tokens), 0) AS cache_write_tokens,
        COALESCE(SUM(reasoning_tokens), 0) AS reasoning_tokens, COALESCE(SUM(estimated_cost_usd), 0) AS estimated_cost_usd,
        COALESCE(SUM(actual_cost_usd), 0) AS actual_cost_usd
      FROM ${d.t.sessions} GROUP BY ${sql.raw(column)} ORDER BY COUNT(*) DESC, ${d.binary(sql.raw(column))}`;
    const decodeGroup = (r: Record<string, unknown>): UsageGroup => ({
      key: r.key === null || r.key === undefined ? null : String(r.key),
      sessions: d.decode.int(r.sessions),
      messages: d.decode.int(r.messages),
      inputTokens: d.decode.int(r.input_tokens),
      outputTokens: d.decode.int(r.output_tokens),
      cacheReadTokens: d.decode.int(r.cache_read_tokens),
      cacheWriteTokens: d.decode.int(r.cache_write_tokens),
      reasoningTokens: d.decode.int(r.reasoning_tokens),
      estimatedCostUsd: Number(r.estimated_cost_usd ?? 0),
      actualCostUsd: Number(r.actual_cost_usd ?? 0),
    });
    return run.read(function* () {
      const sessions = yield* first<{ n: unknown }>(sql`SELECT COUNT(*) AS n FROM ${d.t.sessions}`);
      const messages = yield* first<{ n: unknown }>(sql`SELECT COUNT(*) AS n FROM ${d.t.messages}`);
      const byModel = (yield* rows(group('model'))).map(decodeGroup);
      const bySource = (yield* rows(group('source'))).map(decodeGroup);
      const size = yield* first<{ bytes: unknown }>(d.databaseSize);
      return {
        sessions: d.decode.int(sessions?.n),
        messages: d.decode.int(messages?.n),
        byModel,
        bySource,
        databaseBytes: d.decode.int(size?.bytes),
      };
    });
  }

  /**
   * Prune ended sessions older than `retentionDays` at most once per `minIntervalHours` (tracked in
   * state_meta last_auto_prune), and VACUUM when something was pruned. Failures are reported in the
   * result's `error` instead of thrown, as Hermes' startup hook expects.
   */
  async maybeAutoPruneAndVacuum(
    options: z.input<typeof v.autoMaintenanceOptions> = {},
  ): Promise<AutoMaintenanceResult> {
    // Bad options are refused (thrown); only failures of the run itself are reported in `error`.
    const o: AutoMaintenanceOptions = v.validate(v.autoMaintenanceOptions, options, 'options');
    const result: AutoMaintenanceResult = { skipped: false, pruned: 0, vacuumed: false };
    try {
      const now = this.ctx.now();
      const marker = await this.meta.get(AUTO_PRUNE_KEY);
      const last = marker === null || marker.trim() === '' ? Number.NaN : Number(marker.trim());
      if (Number.isFinite(last) && now - last < o.minIntervalHours * 3600) {
        result.skipped = true;
        return result;
      }
      result.pruned = await this.sessions.prune(o.retentionDays, null);
      if (o.vacuum && result.pruned > 0) {
        try {
          await this.vacuum();
          result.vacuumed = true;
        } catch (error) {
          // The prune is committed; a failed VACUUM only leaves space unreclaimed. Reported, not thrown.
          result.error = `vacuum failed: ${error instanceof Error ? error.message : String(error)}`;
        }
      }
      await this.meta.set(AUTO_PRUNE_KEY, pythonFloatRepr(now));
    } catch (error) {
      result.error = error instanceof Error ? error.message : String(error);
    }
    return result;
  }
}
