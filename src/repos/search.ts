/**
 * Message and session search, as Hermes v11 routes it (hermes-schema-search.md §3-§4): the sanitizer, then
 * word search (FTS5 unicode61 / the block index's words), substring search for CJK of 3+ characters (FTS5
 * trigram / the block index's trigrams), or a LIKE scan for shorter CJK. The query is parsed once (src/search/query.ts) and each
 * dialect emits it; a query FTS5 would reject returns no rows instead of an error, on every backend.
 */
import { type SQL, sql } from 'drizzle-orm';
// Other callbacks run between two bounded pieces of a long search (better-sqlite3 is synchronous).
import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import { contentPreviewText } from '../codecs/content.js';
import { pySlice, pyStrip } from '../codecs/python-text.js';
import type { Spelling, MatchPath, SearchOrder } from '../db/dialect.js';
import { type Op, rows } from '../db/ops.js';
import { containsCjk, routeCjk } from '../search/cjk.js';
import { type QueryNode, parseQuery } from '../search/query.js';
import { sanitizeFts5Query } from '../search/sanitize.js';
import { SNIPPET_HEAD_CHARS, boundedSnippet } from '../search/snippet.js';
import { byActivity } from '../sql/listing.js';
import type { HermesRole, SearchSort, SessionRow } from '../types.js';
import { type RepoContext, catchUpSearch, sqlLimit } from './context.js';
import { decodeSession } from './rows.js';
import * as v from '../validation.js';
import type { z } from 'zod';

/** Later Hermes versions cut queries to 2048 characters before sanitizing; so do we (it bounds the SQL). */
export const MAX_QUERY_CHARS = 2048;
/** Context entries are cut to 200 code points, as in Hermes. */
const CONTEXT_CHARS = 200;

export interface SearchMessagesFilters {
  sourceFilter?: string[] | null;
  excludeSources?: string[] | null;
  roleFilter?: string[] | null;
  limit: number;
  offset: number;
  sort?: SearchSort | null;
}

export interface SearchContextEntry {
  role: HermesRole;
  content: string;
}

export interface SearchHit {
  id: number;
  sessionId: string;
  role: HermesRole;
  /** The match in context, with >>> <<< around matched words (no markers on the short-CJK path). */
  snippet: string | null;
  timestamp: number;
  toolName: string | null;
  source: string;
  model: string | null;
  sessionStarted: number;
  /** The previous message, the match itself and the next one in the session, each cut to 200 characters. */
  context: SearchContextEntry[];
  /**
   * null when relevance ranked every match of the query (always, for newest/oldest). A number N when the
   * query matched more than `searchRankWindow` messages and relevance ranked only the newest N of them.
   */
  rankedWithin: number | null;
}

export interface SessionWithActivity extends SessionRow {
  lastActive: number;
}

/** Python's `sort.strip().lower()`: 'newest' / 'oldest'; anything else orders by relevance. */
export function searchOrder(sort: string | null | undefined): SearchOrder {
  const s = typeof sort === 'string' ? pyStrip(sort).toLowerCase() : '';
  return s === 'newest' || s === 'oldest' ? s : 'relevance';
}

/** `query`: the FTS5 query text `match` was parsed from (what an engine ranking with the shared core parses). */
type Plan =
  | { path: 'words' | 'substrings'; match: QueryNode; query: string }
  | { path: 'like'; tokens: string[] }
  | { path: 'none' };

/** Decide how a raw user query is searched. Pure: the same on every backend. */
export function planSearch(query: string): Plan {
  const cleaned = pySlice(query.replace(/\u0000/g, ' ').toWellFormed(), MAX_QUERY_CHARS);
  if (!pyStrip(cleaned)) return { path: 'none' };
  const q = sanitizeFts5Query(cleaned);
  if (!q) return { path: 'none' };
  if (containsCjk(q)) {
    const route = routeCjk(q);
    if (route.path === 'like') return { path: 'like', tokens: [...new Set(route.tokens)] };
    const parsed = parseQuery(route.query, 'substrings');
    return parsed.ok ? { path: 'substrings', match: parsed.root, query: route.query } : { path: 'none' };
  }
  const parsed = parseQuery(q, 'words');
  return parsed.ok ? { path: 'words', match: parsed.root, query: q } : { path: 'none' };
}

/**
 * Default for `searchRankWindow`: relevance ranks every match of a query unless the query itself matches
 * more than this many messages; then it ranks the newest this-many, and each hit says so (`rankedWithin`).
 */
export const DEFAULT_RANK_WINDOW = 10_000;
/** Hits whose neighbours are found per read. */
const CONTEXT_CHUNK = 100;

/** A hit as its context read needs it: where it sits in its session. */
interface ContextAnchor {
  id: number;
  sessionId: string;
  timestamp: number;
}

function chunks<T>(items: T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

type PageRow = Record<string, unknown>;

/** A page row's snippet: the engine's own, or one computed from the (bounded) text it sent. */
function snippetOf(d: Spelling, row: PageRow, path: MatchPath, match: QueryNode): string | null {
  if (row.snippet !== null && row.snippet !== undefined) return d.decode.freeText(row.snippet);
  const text = d.search.pageTextOf ? d.search.pageTextOf(row) : d.decode.freeText(row.search_text);
  if (text === null) return null;
  const head = pySlice(text, SNIPPET_HEAD_CHARS);
  return boundedSnippet(head, match, path, head.length < text.length);
}

/**
 * Hermes' short-CJK page: newest first, and messages written in the same instant in id order (Hermes scans
 * the table and sorts it stably; we walk the time index newest-first, which gives ties the other way round,
 * so the page is read from the start and a tie group reaching past its end is read whole).
 */
function* likePage(d: Spelling, tokens: string[], where: SQL | null, limit: number, offset: number): Op<PageRow[]> {
  const end = Math.min(Number.MAX_SAFE_INTEGER, offset + limit);
  const prefix = yield* rows(d.search.like(tokens, where, end, 0));
  const last = prefix.at(-1);
  const tail =
    last && prefix.length === end
      ? yield* rows(
          d.search.like(
            tokens,
            sql`${where ?? sql``} AND m.timestamp = ${d.time(d.decode.time(last.timestamp))}`,
            Number.MAX_SAFE_INTEGER,
            0,
          ),
        )
      : [];
  const byId = new Map([...prefix, ...tail].map((r) => [d.decode.int(r.id), r]));
  return [...byId.values()]
    .sort((a, b) => d.decode.time(b.timestamp) - d.decode.time(a.timestamp) || d.decode.int(a.id) - d.decode.int(b.id))
    .slice(offset, end);
}

export class SearchRepo {
  constructor(
    private readonly ctx: RepoContext,
    private readonly rankWindow: number = DEFAULT_RANK_WINDOW,
  ) {}

  /** The filter conditions, or null when there are none (each starts with AND). */
  private filters(f: Pick<SearchMessagesFilters, 'sourceFilter' | 'excludeSources' | 'roleFilter'>): SQL | null {
    const { d } = this.ctx;
    const list = (items: string[]) =>
      sql.join(
        items.map((s) => d.text(s)),
        sql`, `,
      );
    const parts: SQL[] = [];
    if (f.sourceFilter !== null && f.sourceFilter !== undefined) {
      // An empty list matches nothing (Hermes binds "IN ()").
      parts.push(f.sourceFilter.length === 0 ? sql`AND 1 = 0` : sql`AND s.source IN (${list(f.sourceFilter)})`);
    }
    if (f.excludeSources && f.excludeSources.length > 0)
      parts.push(sql`AND s.source NOT IN (${list(f.excludeSources)})`);
    if (f.roleFilter && f.roleFilter.length > 0) parts.push(sql`AND m.role IN (${list(f.roleFilter)})`);
    return parts.length === 0 ? null : sql.join(parts, sql` `);
  }

  /**
   * Hermes' search_messages. Runs in bounded pieces: the ordered page first (relevance: bm25 over every
   * match, or over the newest `searchRankWindow` matches when the query itself has more), then snippets
   * for the page's rows only (each from a bounded window of its text), then context, with the event loop
   * free between pieces. Validated as the store's searchMessages is (which delegates here).
   */
  async searchMessages(query: string, options: z.input<typeof v.searchMessagesOptions> = {}): Promise<SearchHit[]> {
    query = v.validate(v.searchQuery, query, 'query');
    const f: SearchMessagesFilters = v.validate(v.searchMessagesOptions, options, 'options');
    const plan = planSearch(query);
    if (plan.path === 'none') return [];
    const { d } = this.ctx;
    const where = this.filters(f);
    const limit = sqlLimit(f.limit);
    let found: PageRow[];
    let rankedWithin: number | null = null;
    const snippets = new Map<number, string | null>();
    if (plan.path === 'like') {
      found = await this.readOffLoop(() => likePage(d, plan.tokens, where, limit, f.offset));
      for (const r of found) snippets.set(d.decode.int(r.id), d.decode.freeText(r.snippet));
    } else {
      const order = searchOrder(f.sort);
      const cap = this.rankWindow;
      await this.catchUp();
      const { blocksPage } = d.search;
      const result =
        blocksPage !== undefined && this.ctx.run.snapshot !== undefined
          ? await this.ctx.run.snapshot((read) =>
              blocksPage(read, plan.path, plan.query, where, order, limit, f.offset, cap),
            )
          : await this.readOffLoop(() => d.search.page(plan.path, plan.match, where, order, limit, f.offset, cap));
      found = result.rows;
      if (result.capped) rankedWithin = cap;
    }
    // Snippets and context are independent reads: they run side by side.
    const snippetsRead = async () => {
      if (plan.path === 'like') return;
      for (const chunk of chunks(
        found.map((r) => d.decode.int(r.id)),
        d.search.pageTextChunk,
      )) {
        await yieldToEventLoop();
        const texts = await this.readOffLoop(() => rows(d.search.pageText(plan.path, plan.match, chunk)));
        for (const t of texts) {
          // A snippet computed here (a huge row's) costs more the longer the query: one per turn of the loop.
          if (t.snippet === null || t.snippet === undefined) await yieldToEventLoop();
          snippets.set(d.decode.int(t.id), snippetOf(d, t, plan.path, plan.match));
        }
      }
    };
    const [, context] = await Promise.all([
      snippetsRead(),
      this.context(
        found.map((r) => ({
          id: d.decode.int(r.id),
          sessionId: String(r.session_id),
          timestamp: d.decode.time(r.timestamp),
        })),
      ),
    ]);
    return found.map((r): SearchHit => {
      const id = d.decode.int(r.id);
      return {
        id,
        sessionId: String(r.session_id),
        role: String(r.role),
        snippet: snippets.get(id) ?? null,
        timestamp: d.decode.time(r.timestamp),
        toolName: d.decode.freeText(r.tool_name),
        source: String(r.source),
        model: r.model === null || r.model === undefined ? null : String(r.model),
        sessionStarted: d.decode.time(r.session_started),
        context: context.get(id) ?? [],
        rankedWithin,
      };
    });
  }

  /**
   * The previous message, the hit and the next one in its session, each cut to 200 characters. The hits'
   * session and time come from the page (on SQLite, reading a column stored after a 1 MB content walks the
   * row's whole overflow chain), and the heads are read a few rows per read: each read of a huge row's head
   * loads the row, and the event loop runs between reads. The bound on time is implied by the OR beside it;
   * spelled out, it is what lets an engine read the session index as a range from the hit instead of every
   * later (or earlier) message of the session.
   */
  private async context(hits: ContextAnchor[]): Promise<Map<number, SearchContextEntry[]>> {
    const { d, run } = this.ctx;
    const out = new Map<number, SearchContextEntry[]>();
    for (const chunk of chunks(hits, CONTEXT_CHUNK)) {
      await yieldToEventLoop();
      const anchors = sql.join(
        chunk.map((h) => sql`(${d.int(h.id)}, ${d.text(h.sessionId)}, ${d.time(h.timestamp)})`),
        sql`, `,
      );
      const neighbours = await run.read(() =>
        rows<{ id: unknown; prev_id: unknown; next_id: unknown }>(sql`
          WITH t(id, session_id, timestamp) AS (VALUES ${anchors})
          SELECT t.id,
            (SELECT p.id FROM ${d.t.messages} p WHERE p.session_id = t.session_id AND p.timestamp <= t.timestamp
               AND (p.timestamp < t.timestamp OR (p.timestamp = t.timestamp AND p.id < t.id))
             ORDER BY p.timestamp DESC, p.id DESC LIMIT 1) AS prev_id,
            (SELECT n.id FROM ${d.t.messages} n WHERE n.session_id = t.session_id AND n.timestamp >= t.timestamp
               AND (n.timestamp > t.timestamp OR (n.timestamp = t.timestamp AND n.id > t.id))
             ORDER BY n.timestamp ASC, n.id ASC LIMIT 1) AS next_id
          FROM t`),
      );
      const wanted = [
        ...new Set(
          neighbours
            .flatMap((n) => [n.id, n.prev_id, n.next_id])
            .filter((v) => v !== null && v !== undefined)
            .map((v) => d.decode.int(v)),
        ),
      ];
      const byId = new Map<number, SearchContextEntry>();
      for (const piece of chunks(wanted, d.search.contextTextChunk)) {
        await yieldToEventLoop();
        // Only the head of each message is sent: a context entry is 200 characters, whatever the row's size.
        const messages = await run.read(() =>
          rows(sql`SELECT m.id, m.role, ${d.contentHead('m', CONTEXT_CHARS)} FROM ${d.t.messages} m
            WHERE m.id IN (${sql.join(
              piece.map((id) => d.int(id)),
              sql`, `,
            )})`),
        );
        for (const r of messages)
          byId.set(d.decode.int(r.id), {
            role: String(r.role),
            content: pySlice(contentPreviewText(d.decode.content(r)), CONTEXT_CHARS),
          });
      }
      // A message deleted between the reads is left out, as one deleted before the search would be (a hit
      // deleted so gets no context, as before).
      for (const n of neighbours) {
        if (!byId.has(d.decode.int(n.id))) {
          out.set(d.decode.int(n.id), []);
          continue;
        }
        const entries = [n.prev_id, n.id, n.next_id]
          .filter((x) => x !== null && x !== undefined)
          .map((x) => byId.get(d.decode.int(x)))
          .filter((e): e is SearchContextEntry => e !== undefined);
        out.set(d.decode.int(n.id), entries);
      }
    }
    return out;
  }

  /** A search statement's read: its cost is the query's, so it runs off the event loop where the dialect can. */
  private readOffLoop<T>(op: () => Op<T>): Promise<T> {
    const { run } = this.ctx;
    return run.readOffLoop ? run.readOffLoop(op) : run.read(op);
  }

  /** Let the dialect bring its derived search data up to date, a short write at a time. */
  private catchUp(): Promise<void> {
    return catchUpSearch(this.ctx, 'write');
  }

  /** Why this store cannot search messages (a dialect whose search is not built yet), or undefined when it can. */
  get unavailable(): string | undefined {
    return this.ctx.d.search.unavailable;
  }

  /** Whether message `id` matches `query`: what verification asks, independent of pages and ranking. */
  async matchesMessage(query: string, id: number): Promise<boolean> {
    const plan = planSearch(query);
    if (plan.path === 'none') return false;
    const { d } = this.ctx;
    if (plan.path === 'like') {
      const found = await this.readOffLoop(() => rows(d.search.like(plan.tokens, sql`AND m.id = ${d.int(id)}`, 1, 0)));
      return found.length > 0;
    }
    return this.readOffLoop(() => d.search.matchesMessage(plan.path, plan.match, id));
  }

  /** Sessions by latest activity (Hermes' search_sessions), optionally of one source. */
  searchSessions(source: string | null | undefined, limit: number, offset: number): Promise<SessionWithActivity[]> {
    const { d, run } = this.ctx;
    return run.read(function* () {
      const found = yield* rows(byActivity(d, source, sqlLimit(limit), offset));
      return found.map((r) => ({ ...decodeSession(r, d.decode), lastActive: d.decode.time(r.last_active) }));
    });
  }
}
