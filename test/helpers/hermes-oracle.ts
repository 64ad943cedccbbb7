/**
 * The search oracle: Hermes v11's own `search_messages` SQL (hermes-schema-search.md §3.2–§3.5, quoted
 * there verbatim) run on a Hermes-format state.db, with Hermes' sanitizer and CJK routing (our ports,
 * which are tested against Hermes' own input → output table). What this returns is what Hermes returns.
 */
import type { Database } from 'better-sqlite3';
import { COMPOUNDS } from '../../examples/hermes-state-db.js';
import { containsCjk, routeCjk } from '../../src/search/cjk.js';
import { sanitizeFts5Query } from '../../src/search/sanitize.js';

export interface OracleHit {
  id: number;
  snippet: string | null;
  timestamp: number;
}

export interface OracleOptions {
  sort?: 'newest' | 'oldest' | null;
  limit?: number;
  offset?: number;
  /**
   * false: the FTS paths leave snippet() out (null snippets). SQLite computes it for every match before
   * sorting, and FTS5's snippet() over a 1 MB row takes seconds; the ids and their order are the same.
   */
  snippets?: boolean;
}

const SELECT = (table: string, snippets = true) => `SELECT
    m.id,
    m.session_id,
    m.role,
    ${snippets ? `snippet(${table}, 0, '>>>', '<<<', '...', 40)` : 'NULL'} AS snippet,
    m.content,
    m.timestamp,
    m.tool_name,
    s.source,
    s.model,
    s.started_at AS session_started
FROM ${table}
JOIN messages m ON m.id = ${table}.rowid
JOIN sessions s ON s.id = m.session_id
WHERE ${table} MATCH ?`;

const ORDER = { newest: 'ORDER BY m.timestamp DESC, rank', oldest: 'ORDER BY m.timestamp ASC, rank' } as const;

/** Hermes' search_messages without filters (the filters only add `AND …` conditions). */
export function hermesSearch(db: Database, query: string, options: OracleOptions = {}): OracleHit[] {
  const limit = options.limit ?? 20;
  const offset = options.offset ?? 0;
  if (!query.trim()) return [];
  const q = sanitizeFts5Query(query);
  if (!q) return [];
  const order = options.sort ? ORDER[options.sort] : 'ORDER BY rank';
  const run = (table: string, match: string) => {
    try {
      return db
        .prepare(`${SELECT(table, options.snippets)} ${order} LIMIT ? OFFSET ?`)
        .all(match, limit, offset) as Array<Record<string, unknown>>;
    } catch {
      return []; // Hermes catches sqlite3.OperationalError and returns []
    }
  };
  let found: Array<Record<string, unknown>>;
  if (!containsCjk(q)) found = run('messages_fts', q);
  else {
    const route = routeCjk(q);
    if (route.path === 'trigram') found = run('messages_fts_trigram', route.query);
    else {
      const clauses = route.tokens.map(
        () => "(m.content LIKE ? ESCAPE '\\' OR m.tool_name LIKE ? ESCAPE '\\' OR m.tool_calls LIKE ? ESCAPE '\\')",
      );
      const params = route.tokens.flatMap((t) => {
        const p = `%${t.replace(/\\/g, '\\\\').replace(/%/g, '\\%').replace(/_/g, '\\_')}%`;
        return [p, p, p];
      });
      found = db
        .prepare(
          `SELECT m.id, m.session_id, m.role,
             substr(m.content, max(1, instr(m.content, ?) - 40), 120) AS snippet,
             m.content, m.timestamp, m.tool_name, s.source, s.model, s.started_at AS session_started
           FROM messages m JOIN sessions s ON s.id = m.session_id
           WHERE (${clauses.join(' OR ')})
           ORDER BY m.timestamp DESC
           LIMIT ? OFFSET ?`,
        )
        .all(route.tokens[0], ...params, limit, offset) as Array<Record<string, unknown>>;
    }
  }
  return found.map((r) => ({
    id: Number(r.id),
    snippet: r.snippet === null ? null : String(r.snippet),
    timestamp: Number(r.timestamp),
  }));
}

/** How many messages match (Hermes' relevance path with no limit): tells which queries are under the cap. */
export function hermesMatchCount(db: Database, query: string): number {
  const q = sanitizeFts5Query(query);
  if (!q) return 0;
  const count = (table: string, match: string) => {
    try {
      return Number(
        (db.prepare(`SELECT count(*) AS n FROM ${table} WHERE ${table} MATCH ?`).get(match) as { n: number }).n,
      );
    } catch {
      return 0;
    }
  };
  if (!containsCjk(q)) return count('messages_fts', q);
  const route = routeCjk(q);
  return route.path === 'trigram' ? count('messages_fts_trigram', route.query) : -1;
}

/** Generated queries of every class Hermes users type, taken from the history itself. */
export function oracleQueries(db: Database, perClass: number, seed = 7): Array<{ cls: string; query: string }> {
  let s = seed >>> 0;
  const random = () => {
    s = (Math.imul(s ^ (s >>> 15), 0x2c1b3c6d) + 0x6d2b79f5) >>> 0;
    return s / 4294967296;
  };
  const total = Number((db.prepare('SELECT max(id) AS n FROM messages').get() as { n: number }).n);
  const contentOf = db.prepare('SELECT content FROM messages WHERE id >= ? AND content IS NOT NULL LIMIT 1');
  const sample = (predicate: (text: string) => boolean): string => {
    for (;;) {
      const row = contentOf.get(1 + Math.floor(random() * total)) as { content: string } | undefined;
      if (row && !row.content.startsWith('\u0000') && predicate(row.content)) return row.content;
    }
  };
  const latinWords = (text: string) => text.match(/[A-Za-z]{2,}/g) ?? [];
  const han = (text: string) => text.match(/[\u4e00-\u9fff]{4,}/g) ?? [];
  const run = (text: string, n: number): string | null => {
    const words = text
      .split(/\s+/)
      .map((w) => w.replace(/[^A-Za-z]/g, ''))
      .filter(Boolean);
    if (words.length < n) return null;
    const i = Math.floor(random() * (words.length - n + 1));
    return words.slice(i, i + n).join(' ');
  };
  const out: Array<{ cls: string; query: string }> = [];
  const add = (cls: string, make: () => string | null) => {
    for (let i = 0; i < perClass; ) {
      const q = make();
      if (q) {
        out.push({ cls, query: q });
        i++;
      }
    }
  };
  const anyWord = () => {
    const ws = latinWords(sample((t) => latinWords(t).length > 0));
    return ws[Math.floor(random() * ws.length)]!.toLowerCase();
  };
  add('word', anyWord);
  add(
    'common word',
    () =>
      ['the', 'be', 'to', 'of', 'and', 'in', 'docker', 'server', 'error', 'say', 'have', 'not'][
        Math.floor(random() * 12)
      ]!,
  );
  add('phrase 2', () => {
    const p = run(
      sample((t) => latinWords(t).length >= 2),
      2,
    );
    return p ? `"${p}"` : null;
  });
  add('phrase 3', () => {
    const p = run(
      sample((t) => latinWords(t).length >= 3),
      3,
    );
    return p ? `"${p}"` : null;
  });
  add('prefix', () => {
    const w = anyWord();
    return w.length >= 4 ? `${w.slice(0, 3 + Math.floor(random() * (w.length - 3)))}*` : null;
  });
  add('OR', () => `${anyWord()} OR ${anyWord()}`);
  add('AND', () => `${anyWord()} ${anyWord()}`);
  add('NOT', () => `${anyWord()} NOT ${anyWord()}`);
  // Dotted, hyphenated and underscored terms (the sanitizer quotes them): every other one is a term the history
  // itself holds (from a sample of its messages), the rest those a generated history holds, which another may not.
  const codeInData = new Set<string>();
  for (let i = 0; i < 2_000; i++) {
    const row = contentOf.get(1 + Math.floor(random() * total)) as { content: string } | undefined;
    if (row && !row.content.startsWith('\u0000'))
      for (const term of row.content.match(/[A-Za-z0-9]+(?:[._\-/:][A-Za-z0-9]+)+/g) ?? []) codeInData.add(term);
  }
  const dataCode = [...codeInData].sort();
  let nextCode = 0;
  add('code', () => {
    const pool = nextCode++ % 2 === 0 && dataCode.length > 0 ? dataCode : COMPOUNDS;
    return pool[Math.floor(random() * pool.length)]!;
  });
  add('CJK 2', () => {
    const runs = han(sample((t) => han(t).length > 0));
    const r = runs[Math.floor(random() * runs.length)]!;
    const i = Math.floor(random() * (r.length - 1));
    return r.slice(i, i + 2);
  });
  add('CJK 3', () => {
    const runs = han(sample((t) => han(t).length > 0));
    const r = runs[Math.floor(random() * runs.length)]!;
    const i = Math.floor(random() * (r.length - 2));
    return r.slice(i, i + 3);
  });
  add('CJK 4', () => {
    const runs = han(sample((t) => han(t).length > 0));
    const r = runs[Math.floor(random() * runs.length)]!;
    const i = Math.floor(random() * (r.length - 3));
    return r.slice(i, i + 4);
  });
  return out;
}

/** Hermes' snippet for one message a word or substring query matched: its snippet(…) on that row alone. */
export function hermesSnippet(db: Database, query: string, id: number): string | null {
  const q = sanitizeFts5Query(query);
  let table = 'messages_fts';
  let match = q;
  if (containsCjk(q)) {
    const route = routeCjk(q);
    if (route.path !== 'trigram') throw new Error('hermesSnippet: a short-CJK query has no FTS5 snippet');
    table = 'messages_fts_trigram';
    match = route.query;
  }
  const row = db
    .prepare(`SELECT snippet(${table}, 0, '>>>', '<<<', '...', 40) AS snippet FROM ${table}
      WHERE ${table} MATCH ? AND ${table}.rowid = CAST(? AS INTEGER)`)
    .get(match, id) as { snippet: string | null } | undefined;
  return row?.snippet ?? null;
}
