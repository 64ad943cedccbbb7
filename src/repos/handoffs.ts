/**
 * Cross-platform handoffs: NULL -> pending -> running -> completed | failed, and a finished handoff may be
 * requested again. `claim` is an atomic compare-and-set: of any number of concurrent callers, one wins.
 */
import { sql } from 'drizzle-orm';
import { pySlice } from '../codecs/python-text.js';
import { changes, exec, first, rows } from '../db/ops.js';
import type { HandoffState, SessionRow } from '../types.js';
import type { RepoContext } from './context.js';
import { decodeSession, handoffStatusOrNull } from './rows.js';
import * as v from '../validation.js';

export const MAX_HANDOFF_ERROR_LENGTH = 500;

export class HandoffRepo {
  constructor(private readonly ctx: RepoContext) {}

  /** Mark pending for `platform`, unless a handoff is already pending or running. False for unknown ids too. */
  async request(sessionId: string, platform: string): Promise<boolean> {
    const { d, run } = this.ctx;
    sessionId = v.validate(v.lookupId, sessionId, 'sessionId');
    platform = v.validate(v.id, platform, 'platform');
    return run.write(function* () {
      const updated = yield* changes(sql`
        UPDATE ${d.t.sessions} SET handoff_state = 'pending', handoff_platform = ${d.text(platform)}, handoff_error = NULL
        WHERE id = ${d.text(sessionId)} AND (handoff_state IS NULL OR handoff_state IN ('completed', 'failed'))`);
      return updated > 0;
    });
  }

  /** null for an unknown session; all-null fields for a session that never had a handoff. */
  state(sessionId: string): Promise<HandoffState | null> {
    const { d, run } = this.ctx;
    return run.read(function* () {
      const row = yield* first<Record<string, unknown>>(
        sql`SELECT handoff_state, handoff_platform, handoff_error FROM ${d.t.sessions} WHERE id = ${d.text(sessionId)}`,
      );
      if (!row) return null;
      const s = (v: unknown) => (v === null || v === undefined ? null : String(v));
      return {
        state: handoffStatusOrNull(row.handoff_state),
        platform: s(row.handoff_platform),
        error: s(row.handoff_error),
      };
    });
  }

  /** Pending handoffs, oldest session first (served by idx_sessions_handoff_pending). */
  listPending(): Promise<SessionRow[]> {
    const { d, run } = this.ctx;
    return run.read(function* () {
      const found = yield* rows(sql`SELECT * FROM ${d.t.sessions} WHERE handoff_state = 'pending'
                                    ORDER BY started_at ASC, ${d.binary(sql`id`)} ASC`);
      return found.map((r) => decodeSession(r, d.decode));
    });
  }

  /** pending -> running; true for exactly one of any number of concurrent callers. */
  async claim(sessionId: string): Promise<boolean> {
    const { d, run } = this.ctx;
    sessionId = v.validate(v.lookupId, sessionId, 'sessionId');
    return run.write(function* () {
      const updated = yield* changes(sql`
        UPDATE ${d.t.sessions} SET handoff_state = 'running'
        WHERE id = ${d.text(sessionId)} AND handoff_state = 'pending'`);
      return updated > 0;
    });
  }

  async complete(sessionId: string): Promise<void> {
    const { d, run } = this.ctx;
    sessionId = v.validate(v.lookupId, sessionId, 'sessionId');
    return run.write(function* () {
      yield* exec(
        sql`UPDATE ${d.t.sessions} SET handoff_state = 'completed', handoff_error = NULL WHERE id = ${d.text(sessionId)}`,
      );
    });
  }

  /** Mark failed with the error cut to 500 code points. */
  async fail(sessionId: string, error: string): Promise<void> {
    const { d, run } = this.ctx;
    sessionId = v.validate(v.lookupId, sessionId, 'sessionId');
    const message = pySlice(v.validate(v.text, error, 'error'), MAX_HANDOFF_ERROR_LENGTH);
    return run.write(function* () {
      yield* exec(
        sql`UPDATE ${d.t.sessions} SET handoff_state = 'failed', handoff_error = ${d.text(message)} WHERE id = ${d.text(sessionId)}`,
      );
    });
  }
}
