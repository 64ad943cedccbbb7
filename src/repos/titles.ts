/**
 * Titles: Hermes' sanitising, exact-case uniqueness, lookups, resolution to the newest "#N" variant and
 * the next free "#N" in a lineage.
 */
import { sql } from 'drizzle-orm';
import { PY_WS, pyLen } from '../codecs/python-text.js';
import { changes, first, rows } from '../db/ops.js';
import { TitleConflictError, TitleTooLongError } from '../errors.js';
import { escapeLike } from '../sql/like.js';
import type { SessionRow } from '../types.js';
import type { RepoContext } from './context.js';
import { decodeSession } from './rows.js';
import * as v from '../validation.js';

export const MAX_TITLE_LENGTH = 100;

const CONTROL_CHARS = /[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]/g;
const INVISIBLE_CHARS = /[\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff\ufffc\ufff9-\ufffb]/g;
const WHITESPACE_RUNS = new RegExp(`[${PY_WS}]+`, 'gu');

/**
 * Clean a title as Hermes does: drop control and invisible characters, collapse whitespace, trim.
 * Returns null for an empty result; throws TitleTooLongError past 100 code points.
 */
export function sanitizeTitle(title: string | null | undefined): string | null {
  if (!title) return null;
  const cleaned = title.replace(CONTROL_CHARS, '').replace(INVISIBLE_CHARS, '').replace(WHITESPACE_RUNS, ' ').trim();
  if (!cleaned) return null;
  const length = pyLen(cleaned);
  if (length > MAX_TITLE_LENGTH) throw new TitleTooLongError(length, MAX_TITLE_LENGTH);
  return cleaned;
}

const NUMBERED = /^(.*?) #(\d+)$/u;
const TRAILING_NUMBER = /^.* #(\d+)$/u;

export class TitleRepo {
  constructor(private readonly ctx: RepoContext) {}

  /**
   * Set (or, with an empty title, clear) a session's title. True when the session exists. Another session
   * holding the same exact title is a TitleConflictError, checked even for an unknown session, as in Hermes.
   */
  async set(sessionId: string, title: string | null | undefined): Promise<boolean> {
    sessionId = v.validate(v.lookupId, sessionId, 'sessionId');
    // As Hermes: sanitise first (NUL and other controls are dropped, not refused), then validate what is left.
    const cleaned =
      v.validate(v.optionalText, sanitizeTitle(v.validate(v.titleInput, title, 'title')), 'title') ?? null;
    const { d, run } = this.ctx;
    return run.write(
      function* () {
        if (cleaned !== null) {
          const holder = yield* first<{ id: unknown }>(
            sql`SELECT id FROM ${d.t.sessions} WHERE title = ${d.text(cleaned)} AND id <> ${d.text(sessionId)}`,
          );
          if (holder) throw new TitleConflictError(cleaned, String(holder.id));
        }
        const updated = yield* changes(
          sql`UPDATE ${d.t.sessions} SET title = ${d.text(cleaned)} WHERE id = ${d.text(sessionId)}`,
        );
        return updated > 0;
      },
      { lane: sessionId },
    );
  }

  get(sessionId: string): Promise<string | null> {
    const { d, run } = this.ctx;
    return run.read(function* () {
      const row = yield* first<{ title: unknown }>(
        sql`SELECT title FROM ${d.t.sessions} WHERE id = ${d.text(sessionId)}`,
      );
      return row?.title === null || row?.title === undefined ? null : String(row.title);
    });
  }

  getSessionByTitle(title: string): Promise<SessionRow | null> {
    const { d, run } = this.ctx;
    return run.read(function* () {
      const row = yield* first(sql`SELECT * FROM ${d.t.sessions} WHERE title = ${d.text(title)}`);
      return row ? decodeSession(row, d.decode) : null;
    });
  }

  /**
   * The newest-started session titled "<title> #<anything>" (ASCII case-insensitive, as SQLite's LIKE),
   * else the exact title's session, else null.
   */
  resolve(title: string): Promise<string | null> {
    const { d, run } = this.ctx;
    return run.read(function* () {
      const exact = yield* first<{ id: unknown }>(sql`SELECT id FROM ${d.t.sessions} WHERE title = ${d.text(title)}`);
      const numbered = yield* first<{ id: unknown }>(sql`
        SELECT id FROM ${d.t.sessions} WHERE ${d.likeAsciiCi(sql`title`, `${escapeLike(title)} #%`)}
        ORDER BY started_at DESC, ${d.binary(sql`id`)} DESC LIMIT 1`);
      if (numbered) return String(numbered.id);
      return exact ? String(exact.id) : null;
    });
  }

  /** "base" when free, else "base #N" with N one past the highest number in use (the bare title counts as #1). */
  nextInLineage(baseTitle: string): Promise<string> {
    const { d, run } = this.ctx;
    const base = NUMBERED.exec(baseTitle)?.[1] ?? baseTitle;
    return run.read(function* () {
      const found = yield* rows<{ title: unknown }>(sql`
        SELECT title FROM ${d.t.sessions} WHERE title = ${d.text(base)} OR ${d.likeAsciiCi(sql`title`, `${escapeLike(base)} #%`)}`);
      if (found.length === 0) return base;
      // BigInt: Python's int has no ceiling, so "#99999999999999999999" still counts up exactly.
      let max = 1n;
      for (const { title } of found) {
        const n = TRAILING_NUMBER.exec(String(title))?.[1];
        if (n !== undefined && BigInt(n) > max) max = BigInt(n);
      }
      return `${base} #${max + 1n}`;
    });
  }
}
