/**
 * No query freezes the process: on an SQLite file store holding 60,000 ordinary messages and twenty 1 MB
 * logs, and on a PGlite store opened from a URL, a Postgres server and a MariaDB server (a smaller copy:
 * PGlite works for tens of seconds on some of these queries, on its worker thread, and MariaDB's LIKE scan
 * for minutes), the longest query the 2,048-character cap allows in each search path (short CJK's LIKE
 * scan, words, phrases, prefixes, trigram substrings) answers without blocking the event loop for 100 ms
 * at a time, and answers what Hermes' own search SQL answers on the same rows: the same ids in the same
 * order, and the same snippets (FTS5's snippet() of each small row; a 1 MB row's bounded snippet is checked
 * against Hermes by search-huge-rows.test.ts, as FTS5's snippet() over it takes seconds).
 *
 * Each of these queries makes FTS5, Postgres, MariaDB or the LIKE scan work for a large part of a second
 * to minutes; MariaDB's candidates are judged by FTS5's rules in TypeScript, in steps with the loop free
 * between them. The stall bound is the issue's target. In-memory SQLite is not here: it has no second
 * connection, and runs these statements on the event loop (a documented limitation).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CAP_QUERIES } from '../../bench/judge.js';
import { pastedLog } from '../../bench/search.js';
import { type SessionStore, copyStore, openStore } from '../../src/index.js';
import { harnessAvailable } from '../../src/testing/index.js';
import { MAX_QUERY_CHARS, planSearch } from '../../src/repos/search.js';
import { mariadbHarness, postgresHarness } from '../backends.js';
import { corpus } from '../helpers/corpus.js';
import { hermesSearch, hermesSnippet } from '../helpers/hermes-oracle.js';

const STALL_LIMIT_MS = 100;
/** More hits than there are logs: each page holds ordinary messages too. */
const LIMIT = 30;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hsdb-search-loop-'));

const CASES = [
  // The issue's query: one short CJK character, then short Latin tokens (a LIKE scan per token).
  { path: 'short CJK', route: 'like', query: CAP_QUERIES.shortCjk, sorts: [null] },
  { path: 'words', route: 'words', query: CAP_QUERIES.words, sorts: [null, 'newest'] },
  { path: 'phrases', route: 'words', query: CAP_QUERIES.phrases, sorts: [null, 'newest'] },
  { path: 'prefixes', route: 'words', query: CAP_QUERIES.prefixes, sorts: [null, 'newest'] },
  // Over the rank window (more than 10,000 matches): compared in the time orders, which reach every match.
  { path: 'trigram', route: 'substrings', query: CAP_QUERIES.trigram, sorts: ['newest', 'oldest'] },
] as const;

/** The corpus, written raw in one transaction (the FTS triggers index it as appends would). */
function writeCorpus(file: string, ordinary: number, logs: number, logChars: number): void {
  const db = new Database(file);
  const base = 1_790_000_000;
  const messages = corpus(ordinary);
  const session = db.prepare('INSERT INTO sessions (id, source, started_at, message_count) VALUES (?, ?, ?, 0)');
  const message = db.prepare(
    'INSERT INTO messages (session_id, role, content, tool_name, tool_calls, timestamp) VALUES (?, ?, ?, ?, ?, ?)',
  );
  db.transaction(() => {
    const sources = new Map(messages.map((m) => [m.session, m.source]));
    let s = 0;
    for (const [id, source] of sources) session.run(id, source, base + 25 * s++);
    messages.forEach((m, i) => {
      const calls = m.toolCalls ? JSON.stringify(m.toolCalls) : null;
      message.run(m.session, m.role, m.content, m.toolName ?? null, calls, base + i);
    });
    // A few messages the short-CJK query finds, by content, tool name and (case-insensitively) tool calls.
    session.run('cjk', 'telegram', base + 100);
    const calls = (q: string) => JSON.stringify([{ id: 'c', type: 'function', function: { name: 'f', arguments: q } }]);
    const found: Array<[string, string | null, string | null]> = [
      ['这是我的数据库', null, null],
      ['see zq17x in the log', null, null],
      ['nothing here', 'zq200x', null],
      ['nor here', 'terminal', calls('ZQ321X')],
      ['我们的服务器 zq5x', null, null],
    ];
    found.forEach(([content, tool, toolCalls], k) => {
      message.run('cjk', 'user', content, tool, toolCalls, base + 12_345 * (k + 1) + 0.5);
    });
    session.run('logs', 'cli', base + ordinary);
    for (let i = 0; i < logs; i++)
      message.run('logs', 'tool', pastedLog(i).slice(0, logChars), 'terminal', null, base + ordinary + i);
  })();
  db.close();
}

/** Run `work` and return its result with the longest event-loop stall seen meanwhile (ms). */
async function measured<T>(label: string, work: () => Promise<T>): Promise<{ value: T; stallMs: number }> {
  const monitor = monitorEventLoopDelay({ resolution: 5 });
  monitor.enable();
  try {
    await sleep(20);
    const started = performance.now();
    const value = await work();
    const tookMs = performance.now() - started;
    await sleep(20);
    const stallMs = monitor.max / 1e6;
    console.log(`[event-loop] ${label}: ${tookMs.toFixed(0)} ms, longest stall ${stallMs.toFixed(1)} ms`);
    return { value, stallMs };
  } finally {
    monitor.disable();
  }
}

/** A store at `url` holding a copy of the Hermes file's rows. */
async function copiedInto(url: string, file: string): Promise<SessionStore> {
  const store = await openStore(url);
  const source = await openStore(`sqlite:${file}`, { readonly: true });
  try {
    await copyStore(source, store);
  } finally {
    await source.close();
  }
  return store;
}

const postgres = await postgresHarness();
const mariadb = await mariadbHarness();
/** PGlite's and the server's corpus: smaller, as PGlite's statements are slower. */
const POSTGRES_CORPUS = {
  ordinary: 10_000,
  logs: 4,
  // Postgres keeps at most 256 positions of a word per message (docs/search.md, Parity), which ranks a 1 MB log
  // unlike FTS5; logs of 12,000 characters (no word 256 times, still past FTS5's snippet() bound of 8 KB)
  // rank as Hermes ranks them.
  logChars: 12_000,
  jsonbToolCalls: true,
};

/** Each store under test, and the corpus it holds. */
const BACKENDS = [
  {
    name: 'SQLite file store',
    ordinary: 60_000,
    logs: 20,
    logChars: Number.POSITIVE_INFINITY,
    jsonbToolCalls: false,
    available: true,
    unavailable: undefined,
    open: (file: string) => openStore(`sqlite:${file}`),
  },
  {
    name: 'PGlite store (pglite:memory)',
    ...POSTGRES_CORPUS,
    available: true,
    unavailable: undefined,
    open: (file: string) => copiedInto('pglite:memory', file),
  },
  {
    name: 'Postgres server',
    ...POSTGRES_CORPUS,
    available: harnessAvailable(postgres),
    unavailable: postgres.unavailable,
    open: async (file: string) => copiedInto(await postgres.freshUrl(), file),
  },
  {
    // The server's LIKE scan of the short-CJK query over megabyte logs takes minutes: the Postgres corpus.
    // Judging a megabyte row in steps is measured by bench/judge-steps.ts.
    name: 'MariaDB server',
    ...POSTGRES_CORPUS,
    jsonbToolCalls: false,
    available: harnessAvailable(mariadb),
    unavailable: mariadb.unavailable,
    open: async (file: string) => copiedInto(await mariadb.freshUrl(), file),
  },
];

afterAll(async () => {
  await postgres.cleanup();
  await mariadb.cleanup();
  fs.rmSync(dir, { recursive: true, force: true });
});

for (const backend of BACKENDS)
  describe.skipIf(!backend.available)(
    `${backend.name}: the longest query of each search path never stalls the event loop${backend.available ? '' : ` (skipped: ${backend.unavailable})`}`,
    () => {
      const file = path.join(dir, `${BACKENDS.indexOf(backend)}.db`);
      let store: SessionStore;
      let hermes: Database.Database;
      /** Whether a message has tool calls, in the Hermes file. */
      let hasToolCalls: Database.Statement<[number], number>;

      beforeAll(async () => {
        await (await openStore(`sqlite:${file}`)).close();
        writeCorpus(file, backend.ordinary, backend.logs, backend.logChars);
        store = await backend.open(file);
        hermes = new Database(file, { readonly: true });
        hasToolCalls = hermes
          .prepare<[number], number>('SELECT tool_calls IS NOT NULL FROM messages WHERE id = ?')
          .pluck();
      }, 180_000);

      afterAll(async () => {
        hermes?.close();
        await store?.close();
      });

      it.each(CASES)(
        '$path: answers Hermes answers, with no stall over 100 ms',
        async ({ path: name, route, query, sorts }) => {
          // At the cap: one more term would not fit.
          expect([...query].length).toBeGreaterThan(MAX_QUERY_CHARS - 40);
          expect(planSearch(query).path).toBe(route);
          for (const sort of sorts) {
            const { value: hits, stallMs } = await measured(
              `${backend.name}, ${name} (${[...query].length} chars, ${sort ?? 'relevance'})`,
              () => store.searchMessages(query, { sort, limit: LIMIT }),
            );
            expect(stallMs).toBeLessThan(STALL_LIMIT_MS);
            const expected = hermesSearch(hermes, query, { sort, limit: LIMIT, snippets: route === 'like' });
            expect(expected.length).toBeGreaterThan(route === 'like' ? 3 : 10);
            expect(hits.map((h) => h.id)).toEqual(expected.map((h) => h.id));
            expect(hits.every((h) => h.rankedWithin === null)).toBe(true);
            if (route === 'like') {
              expect(hits.map((h) => h.snippet)).toEqual(expected.map((h) => h.snippet));
              continue;
            }
            // Postgres keeps tool calls as jsonb, whose text spaces JSON its own way: a snippet cut from them differs
            // in its window (docs/search.md, Parity). Their ids and order are still compared above; on PGlite every small
            // hit of some of these queries has tool calls.
            const small = hits.filter(
              (h) => h.sessionId !== 'logs' && (backend.jsonbToolCalls === false || hasToolCalls.get(h.id) === 0),
            );
            if (!backend.jsonbToolCalls) expect(small.length).toBeGreaterThan(0);
            expect(small.map((h) => h.snippet)).toEqual(small.map((h) => hermesSnippet(hermes, query, h.id)));
            for (const h of hits) expect(h.snippet).toContain('>>>');
          }
        },
      );
    },
  );
