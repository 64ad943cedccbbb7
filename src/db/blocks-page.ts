/**
 * A page by time over the block index, the same on every engine that ranks with rank-postings.ts: from every
 * match (ids ascending, with their bm25), the first `end` ordered by time, then bm25, then id, filters applied.
 * The engine supplies two reads: the times of some ids (filters applied), and the ids past the asked ones whose
 * time reaches the page's last.
 */
import type { SnapshotRead } from './dialect.js';
import type { Op } from './ops.js';
import { lowerBound } from '../search/rank-shared.js';

/** Matches whose time is asked first for a page by time (ids mostly follow time): then twice as many. */
const TIME_FIRST = 256;
/** Matches past those asked that are checked one by one; beyond it, the messages whose time reaches the page. */
export const TIME_REST = 1_000;

export interface TimeReads {
  /** Per id of `ids` that passes the filters: its time as epoch seconds and as the engine's text. */
  times(ids: number[]): Op<Array<{ id: number; epoch: number; text: string }>>;
  /**
   * Ids (at most TIME_REST + 1) that pass the filters, below `last` (newest; above it for oldest) with a time at
   * or past `edge` (the engine's text of a time).
   */
  reaching(edge: string, last: number, newest: boolean): Op<number[]>;
}

/**
 * Ids mostly follow time, so the times of the newest ids (oldest: the smallest) are asked first, until the page
 * is full; then every other match whose time reaches the page's last is found (the rest checked directly when
 * few, else the messages of that stretch of time, through idx_messages_timestamp).
 */
export async function pageByTime(
  read: SnapshotRead,
  reads: TimeReads,
  all: { ids: Float64Array; scores: Float64Array },
  newest: boolean,
  end: number,
): Promise<number[]> {
  // Every match in id order (rankPostings' unordered answer): a score is found by binary search, not through
  // a map of every match, and the newest ids are the last ones.
  const byId = all.ids;
  const scoreOf = (id: number): number | undefined => {
    const at = lowerBound(byId, id);
    return byId[at] === id ? all.scores[at] : undefined;
  };
  const ids = newest ? byId.slice().reverse() : byId;
  const time = new Map<number, { epoch: number; text: string }>();
  const ask = async (batch: ArrayLike<number>) => {
    if (batch.length === 0) return;
    for (const r of await read(reads.times(Array.from(batch)))) time.set(r.id, { epoch: r.epoch, text: r.text });
  };
  let sent = 0;
  for (let size = Math.max(TIME_FIRST, 2 * end); sent < ids.length && time.size < end; size *= 2) {
    const batch = ids.subarray(sent, sent + size);
    sent += batch.length;
    await ask(batch);
  }
  const rest = ids.subarray(sent);
  if (rest.length > 0 && time.size >= end) {
    if (rest.length <= TIME_REST) await ask(rest);
    else {
      // The page's last time: a match not asked yet belongs on the page only if its time reaches it.
      const edge = [...time.values()].sort((a, b) => (newest ? b.epoch - a.epoch : a.epoch - b.epoch))[end - 1]!;
      const reaching = await read(reads.reaching(edge.text, ids[sent - 1]!, newest));
      if (reaching.length > TIME_REST)
        for (let at = 0; at < rest.length; at += TIME_REST) await ask(rest.subarray(at, at + TIME_REST));
      else await ask(reaching.filter((id) => scoreOf(id) !== undefined));
    }
  }
  const sign = newest ? -1 : 1;
  return [...time.keys()]
    .sort((a, b) => sign * (time.get(a)!.epoch - time.get(b)!.epoch) || scoreOf(a)! - scoreOf(b)! || a - b)
    .slice(0, end);
}
