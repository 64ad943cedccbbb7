/**
 * Bounded cost per hit: a store holding twenty 1 MB pasted logs, each containing the query word hundreds of
 * times, answers a search in every sort mode with bounded snippets and context, and never blocks the event
 * loop for long. FTS5's snippet() costs more than linearly in the matches inside one row, so it may only ever
 * see small rows; huge rows get a snippet from a bounded window at the head of their text (and so does
 * Postgres). The issue's 100 ms answer time is measured by `npm run bench` (search section, "1 MB rows"),
 * not asserted here: on a loaded 2-core CI machine it is noise-bound. What is asserted is the event-loop
 * stall (the issue's 50 ms; best of three runs) and, as a guard against the super-linear snippet coming back
 * (13-41 s before it was bounded), an answer within 2 s.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pastedLog } from '../bench/search.js';
import { createHermesStateDb } from '../examples/hermes-state-db.js';
import type { SessionStore } from '../src/index.js';
import { SNIPPET_HEAD_CHARS } from '../src/search/snippet.js';
import {
  type Harness,
  pgliteHarness,
  postgresHarness,
  reportAvailability,
  sqliteFileHarness,
  sqliteMemoryHarness,
  mariadbHarness,
} from './backends.js';

const harnesses: Harness[] = [
  sqliteFileHarness(),
  sqliteMemoryHarness(),
  pgliteHarness(),
  await postgresHarness(),
  await mariadbHarness(),
];
const HUGE_ROWS = 20;

/** `chars` characters (code points) of words, with "needle" as the first word at or after character `at`. */
function wordsWithNeedle(chars: number, at: number, word: string): string {
  const filler = `${word} `.repeat(Math.ceil(chars / (word.length + 1)) + 1);
  const text = `${filler.slice(0, Math.ceil(at / (word.length + 1)) * (word.length + 1))}needle ${filler}`;
  return [...text].slice(0, chars).join('');
}

/**
 * Rows past the 8 KB line for FTS5's own snippet(), each searched through the bounded path, against Hermes'
 * snippet(…) on the same rows: around the line, with an indexed text of exactly the head's length in
 * multi-byte characters and matched near its end (the whole row is seen, so no "..." is added), one
 * character longer and matched at its start (cut), and 1 MB with the match deep inside the head. Hermes runs FTS5's snippet() over the whole row; the bounded path must give the same text.
 */
const BIG_ROWS = [
  wordsWithNeedle(20_000, 10_000, 'log'),
  wordsWithNeedle(SNIPPET_HEAD_CHARS, 30, 'naïve'),
  // Hermes indexes content || ' ' || tool_name || ' ' || tool_calls: with no tool columns, two characters more.
  wordsWithNeedle(SNIPPET_HEAD_CHARS - 2, SNIPPET_HEAD_CHARS - 20, 'naïve'),
  wordsWithNeedle(SNIPPET_HEAD_CHARS + 1, 30, 'naïve'),
  wordsWithNeedle(1024 * 1024, 40_000, 'entry'),
];

for (const h of harnesses) {
  const available = reportAvailability(h);
  describe.skipIf(!available)(
    `search over 1 MB rows [${h.name}]${available ? '' : ` (skipped: ${h.unavailable})`}`,
    () => {
      let store: SessionStore;
      beforeAll(async () => {
        store = await h.open();
        await store.createSession('logs', 'cli');
        await store.createSession('chat', 'telegram');
        for (let i = 0; i < 50; i++)
          await store.appendMessage(
            'chat',
            i % 2 ? 'user' : 'assistant',
            `the deploy hit a timeout again, message ${i}`,
          );
        for (let i = 0; i < HUGE_ROWS; i++)
          await store.appendMessage('logs', 'tool', pastedLog(i), { toolName: 'terminal' });
      }, 300_000);
      afterAll(async () => {
        await store?.close();
        await h.cleanup();
      });

      it.each(['relevance', 'newest', 'oldest'] as const)(
        'answers quickly and keeps the event loop free (%s)',
        async (sort) => {
          await store.searchMessages('timeout', { sort, limit: 20 }); // warm caches and prepared statements
          // Best of three: on a shared 2-core machine running other test files, noise only ever adds time.
          let elapsed = Infinity;
          let stallMs = Infinity;
          for (let run = 0; run < 3; run++) {
            const loop = monitorEventLoopDelay({ resolution: 1 });
            loop.enable();
            const started = performance.now();
            const hits = await store.searchMessages('timeout', { sort, limit: 80 });
            elapsed = Math.min(elapsed, performance.now() - started);
            loop.disable();
            stallMs = Math.min(stallMs, loop.max / 1e6);
            expect(hits).toHaveLength(50 + HUGE_ROWS);
            const huge = hits.filter((hit) => hit.sessionId === 'logs');
            expect(huge).toHaveLength(HUGE_ROWS);
            for (const hit of huge) {
              expect(hit.snippet).toContain('>>>timeout<<<');
              expect(hit.snippet!.length).toBeLessThan(1000);
              expect(hit.context.every((c) => [...c.content].length <= 200)).toBe(true);
            }
          }
          console.log(
            `[${h.name}] ${sort}: ${elapsed.toFixed(1)} ms, longest event-loop stall ${stallMs.toFixed(1)} ms`,
          );
          expect(elapsed).toBeLessThan(2000);
          // PGlite runs Postgres on this very thread, so each of its queries stalls the loop for as long as it
          // runs (~25 ms here quiet, ~50 ms on a loaded runner); the other backends only decode on it. The old
          // code stalled for seconds on every backend.
          expect(stallMs).toBeLessThan(h.name === 'pglite' ? 150 : 50);
        },
      );
    },
  );
}

describe("snippets of rows past FTS5's snippet() line equal Hermes' own", () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hsdb-big-snippets-'));
  let expected: string[];
  beforeAll(() => {
    const hermes = createHermesStateDb(path.join(dir, 'state.db'));
    hermes.prepare(`INSERT INTO sessions (id, source, started_at) VALUES ('big', 'cli', 1)`).run();
    const insert = hermes.prepare(
      `INSERT INTO messages (session_id, role, content, timestamp) VALUES ('big', 'tool', ?, ?)`,
    );
    for (const [i, text] of BIG_ROWS.entries()) insert.run(text, 2 + i);
    // Hermes' search_messages: snippet(messages_fts, 0, '>>>', '<<<', '...', 40), oldest first here.
    expected = hermes
      .prepare(`SELECT snippet(messages_fts, 0, '>>>', '<<<', '...', 40) AS snippet FROM messages_fts
        JOIN messages m ON m.id = messages_fts.rowid WHERE messages_fts MATCH '"needle"' ORDER BY m.timestamp`)
      .pluck()
      .all() as string[];
    hermes.close();
  });
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  for (const h of harnesses) {
    const available = reportAvailability(h);
    it.skipIf(!available)(
      `[${h.name}]${available ? '' : ` (skipped: ${h.unavailable})`}`,
      async () => {
        expect(expected).toHaveLength(BIG_ROWS.length);
        expect(expected[3]!.endsWith('...')).toBe(true); // the cut row: more text follows the window
        const store = await h.open();
        try {
          await store.createSession('big', 'cli');
          for (const text of BIG_ROWS) await store.appendMessage('big', 'tool', text);
          const hits = await store.searchMessages('needle', { sort: 'oldest', limit: 10 });
          expect(hits.map((hit) => hit.snippet)).toEqual(expected);
        } finally {
          await store.close();
          await h.cleanup();
        }
      },
      120_000,
    );
  }
});
