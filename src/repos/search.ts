/**
 * Message and session search, as Hermes v11 routes it (hermes-schema-search.md §3-§4): the sanitizer, then
 * word search (FTS5 unicode61 / tsvector), substring search for CJK of 3+ characters (FTS5 trigram /
 * pg_trgm), or a LIKE scan for shorter CJK. The query is parsed once (src/search/query.ts) and each
 * dialect emits it; a query FTS5 would reject returns no rows instead of an error, on every backend.
 */
import { type SQL, sql } from 'drizzle-orm';
import { contentPreviewText } from '../codecs/content.js';
import { pySlice, pyStrip } from '../codecs/python-text.js';
import type { SearchOrder } from '../db/dialect.js';
import { rows } from '../db/ops.js';
import { containsCjk, routeCjk } from '../search/cjk.js';
import { type QueryNode, parseQuery, positivePhrases } from '../search/query.js';
import { sanitizeFts5Query } from '../search/sanitize.js';
import { substringSnippet, wordSnippet } from '../search/snippet.js';
import { byActivity } from '../sql/listing.js';
import type { SessionRow } from '../types.js';
import { type RepoContext, sqlLimit } from './context.js';
import { decodeMessage, decodeSession } from './rows.js';

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
  sort?: string | null;
}

export interface SearchContextEntry {
  role: string;
  content: string;
}

export interface SearchHit {
  id: number;
  sessionId: string;
  role: string;
  /** The match in context, with >>> <<< around matched words (no markers on the short-CJK path). */
  snippet: string | null;
  timestamp: number;
  toolName: string | null;
  source: string;
  model: string | null;
  sessionStarted: number;
  /** The previous message, the match itself and the next one in the session, each cut to 200 characters. */
  context: SearchContextEntry[];
}

export interface SessionWithActivity extends SessionRow {
  lastActive: number;
}

/** Python's `sort.strip().lower()`: 'newest' / 'oldest'; anything else orders by relevance. */
export function searchOrder(sort: string | null | undefined): SearchOrder {
  const s = typeof sort === 'string' ? pyStrip(sort).toLowerCase() : '';
  return s === 'newest' || s === 'oldest' ? s : 'relevance';
}

type Plan =
  | { path: 'words' | 'substrings'; match: QueryNode }
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
    return parsed.ok ? { path: 'substrings', match: parsed.root } : { path: 'none' };
  }
  const parsed = parseQuery(q, 'words');
  return parsed.ok ? { path: 'words', match: parsed.root } : { path: 'none' };
}

/** Default for `searchRankWindow`: relevance ranks the newest 2,000 matches of a query. */
export const DEFAULT_RANK_WINDOW = 2000;

/**
 * A superset of the query that is cheap to walk newest-first: every multi-word phrase becomes the AND of
 * its words (no positions to check) and NOT clauses are dropped. The rank window is counted on it.
 */
export function relaxForWindow(node: QueryNode): QueryNode {
  switch (node.kind) {
    case 'phrase':
      if (node.tokens.length < 2) return node;
      return {
        kind: 'and',
        children: node.tokens.map((t, i) => ({
          kind: 'phrase' as const,
          text: t,
          tokens: [t],
          prefix: node.prefix && i === node.tokens.length - 1,
        })),
      };
    case 'and':
    case 'or':
      return { kind: node.kind, children: node.children.map(relaxForWindow) };
    case 'not':
      return relaxForWindow(node.left);
  }
}

export class SearchRepo {
  constructor(
    private readonly ctx: RepoContext,
    private readonly rankWindow: number = DEFAULT_RANK_WINDOW,
  ) {}

  private filters(f: SearchMessagesFilters): SQL {
    const { d } = this.ctx;
    const list = (items: string[]) => sql.join(items.map((s) => d.text(s)), sql`, `);
    const parts: SQL[] = [];
    if (f.sourceFilter !== null && f.sourceFilter !== undefined) {
      // An empty list matches nothing (Hermes binds "IN ()").
      parts.push(f.sourceFilter.length === 0 ? sql`AND 1 = 0` : sql`AND s.source IN (${list(f.sourceFilter)})`);
    }
    if (f.excludeSources && f.excludeSources.length > 0) parts.push(sql`AND s.source NOT IN (${list(f.excludeSources)})`);
    if (f.roleFilter && f.roleFilter.length > 0) parts.push(sql`AND m.role IN (${list(f.roleFilter)})`);
    return sql.join(parts, sql` `);
  }

  searchMessages(query: string, f: SearchMessagesFilters): Promise<SearchHit[]> {
    const plan = planSearch(query);
    if (plan.path === 'none') return Promise.resolve([]);
    const { d } = this.ctx;
    const where = this.filters(f);
    const limit = sqlLimit(f.limit);
    const order = searchOrder(f.sort);
    const statement =
      plan.path === 'like'
        ? d.search.like(plan.tokens, where, limit, f.offset)
        : d.search[plan.path](plan.match, where, order, limit, f.offset, { size: this.rankWindow, match: relaxForWindow(plan.match) });
    const phrases = plan.path === 'like' ? [] : positivePhrases(plan.match);
    return d.read(function* () {
      const found = yield* rows(statement);
      if (found.length === 0) return [];
      const ids = found.map((r) => d.decode.int(r.id));
      const idList = sql.join(ids.map((id) => d.int(id)), sql`, `);
      const neighbours = yield* rows<{ id: unknown; prev_id: unknown; next_id: unknown }>(sql`
        SELECT t.id,
          (SELECT p.id FROM messages p WHERE p.session_id = t.session_id
             AND (p.timestamp < t.timestamp OR (p.timestamp = t.timestamp AND p.id < t.id))
           ORDER BY p.timestamp DESC, p.id DESC LIMIT 1) AS prev_id,
          (SELECT n.id FROM messages n WHERE n.session_id = t.session_id
             AND (n.timestamp > t.timestamp OR (n.timestamp = t.timestamp AND n.id > t.id))
           ORDER BY n.timestamp ASC, n.id ASC LIMIT 1) AS next_id
        FROM messages t WHERE t.id IN (${idList})`);
      const around = new Map(neighbours.map((n) => [d.decode.int(n.id), [d.decode.intOrNull(n.prev_id), d.decode.intOrNull(n.next_id)]]));
      const wanted = [...new Set(neighbours.flatMap((n) => [n.id, n.prev_id, n.next_id]).filter((v) => v !== null && v !== undefined).map((v) => d.decode.int(v)))];
      const messages = yield* rows(sql`SELECT ${d.messageColumns('m')} FROM messages m WHERE m.id IN (${sql.join(wanted.map((id) => d.int(id)), sql`, `)})`);
      const byId = new Map(messages.map((r) => {
        const m = decodeMessage(r, d.decode);
        return [m.id, { role: m.role, content: pySlice(contentPreviewText(m.content), CONTEXT_CHARS) }];
      }));
      return found.map((r): SearchHit => {
        const id = d.decode.int(r.id);
        const [prev, next] = around.get(id) ?? [null, null];
        const snippet = d.search.snippetsInSql || plan.path === 'like'
          ? (r.snippet === null || r.snippet === undefined ? null : String(r.snippet))
          : plan.path === 'words'
            ? wordSnippet(String(r.search_text ?? ''), phrases)
            : substringSnippet(String(r.search_text ?? ''), phrases);
        return {
          id,
          sessionId: String(r.session_id),
          role: String(r.role),
          snippet,
          timestamp: d.decode.time(r.timestamp),
          toolName: r.tool_name === null || r.tool_name === undefined ? null : String(r.tool_name),
          source: String(r.source),
          model: r.model === null || r.model === undefined ? null : String(r.model),
          sessionStarted: d.decode.time(r.session_started),
          context: [prev, id, next].filter((x): x is number => x !== null).map((x) => byId.get(x)).filter((e) => e !== undefined),
        };
      });
    });
  }

  /** Sessions by latest activity (Hermes' search_sessions), optionally of one source. */
  searchSessions(source: string | null | undefined, limit: number, offset: number): Promise<SessionWithActivity[]> {
    const { d } = this.ctx;
    return d.read(function* () {
      const found = yield* rows(byActivity(d, source, sqlLimit(limit), offset));
      return found.map((r) => ({ ...decodeSession(r, d.decode), lastActive: d.decode.time(r.last_active) }));
    });
  }
}
