/**
 * Lineage through parent_session_id: ancestors (root first), descendants, the compression tip, and the
 * resume redirect. All bounded and safe on cycles (see src/sql/lineage.ts).
 */
import { rows } from '../db/ops.js';
import type { Op } from '../db/ops.js';
import { ancestorsWalk, compressionWalk, descendantsWalk, resumeWalk, untilRepeat } from '../sql/lineage.js';
import type { RepoContext } from './context.js';

export class LineageRepo {
  constructor(private readonly ctx: RepoContext) {}

  /** Root first, ending with `id` (which is always included, even when it does not exist). */
  lineageOp(id: string): () => Op<string[]> {
    const { d } = this.ctx;
    return function* () {
      const walked = untilRepeat(yield* rows<{ id: unknown }>(ancestorsWalk(d, id)));
      const ids = walked.map((r) => String(r.id));
      if (ids.length === 0) ids.push(id);
      return ids.reverse();
    };
  }

  /** The newest compression continuation at the end of the chain, or `id` itself. */
  compressionTipOp(id: string): () => Op<string> {
    const { d } = this.ctx;
    return function* () {
      const walked = untilRepeat(yield* rows<{ id: unknown }>(compressionWalk(d, id)));
      return walked.length > 0 ? String(walked[walked.length - 1]!.id) : id;
    };
  }

  getLineage(id: string): Promise<string[]> {
    return this.ctx.run.read(this.lineageOp(id));
  }

  getCompressionTip(id: string): Promise<string> {
    return this.ctx.run.read(this.compressionTipOp(id));
  }

  getDescendants(id: string): Promise<string[]> {
    const { d, run } = this.ctx;
    return run.read(function* () {
      return (yield* rows<{ id: unknown }>(descendantsWalk(d, id))).map((r) => String(r.id));
    });
  }

  /**
   * Where to resume `id`: itself when it has messages; otherwise the first session with messages along
   * the latest-child chain (32 steps at most); otherwise `id`. Empty, null or undefined come back unchanged.
   */
  resolveResumeSessionId<T extends string | null | undefined>(id: T): Promise<T | string> {
    if (!id) return Promise.resolve(id);
    const { d, run } = this.ctx;
    return run.read(function* () {
      const walked = untilRepeat(yield* rows<{ id: unknown; has_messages: unknown }>(resumeWalk(d, id)));
      const found = walked.find((step) => d.decode.bool(step.has_messages));
      return found ? String(found.id) : id;
    });
  }
}
