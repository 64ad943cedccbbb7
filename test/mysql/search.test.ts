/**
 * MariaDB's message search against SQLite's (FTS5, Hermes' own engine) on generated rows and queries: words
 * InnoDB's FULLTEXT cut differently from unicode61 ('_' inside words, apostrophes, accents, case, CJK runs,
 * characters outside the Basic Multilingual Plane, two-letter words), joined by every operator. The block index
 * (migration 0007) tokenizes as FTS5 does, so the answers must be equal: the same messages in the same order,
 * in every sort.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type SessionStore, openStore } from '../../src/index.js';
import { reportAvailability, mariadbHarness } from '../backends.js';
import { TestClock } from '../helpers/store-fixture.js';

const WORDS = [
  'deploy',
  'Deploy',
  'DEPLOY',
  'déploy',
  'web_search',
  'read_file',
  "don't",
  'go',
  'ai',
  'k8s',
  'naïve',
  'café',
  'straße',
  'strasse',
  'İstanbul',
  '𝐀bcd',
  'ａｂｃ',
  'ﬁle',
  'file',
  '日本語のテキスト',
  '検索',
  'x²y',
  'deployment',
  'timeout',
];
const GAPS = [' ', '.', '-', ', ', '\n', '/', ': '];
const QUERY_WORDS = [
  'deploy',
  'DEPLOY',
  'deploy*',
  'search',
  'web',
  'read',
  'file',
  'don',
  't',
  'go',
  'ai',
  'k8s',
  'naive',
  'cafe',
  'straße',
  'strasse',
  'istanbul',
  'bcd',
  'ａｂｃ',
  'abc',
  'ﬁle',
  'x²y',
  'x2y',
  'timeout',
  'time*',
  '"web search"',
  '"read file"',
  '"don t"',
  '"go ai"',
  '"deploy timeout"',
  '日本語',
  'テキスト',
  '検索',
];

const row = fc
  .array(fc.tuple(fc.constantFrom(...WORDS), fc.constantFrom(...GAPS)), { minLength: 1, maxLength: 10 })
  .map((parts) => parts.map(([w, g]) => w + g).join(''));
const query = fc
  .array(fc.tuple(fc.constantFrom(...QUERY_WORDS), fc.constantFrom(' ', ' AND ', ' OR ', ' NOT ')), {
    minLength: 1,
    maxLength: 3,
  })
  .map((parts) => parts.map(([w, op], i) => (i === 0 ? w : op + w)).join(''));

/**
 * A named difference (docs/schema.md, MySQL/MariaDB): with NOT under an OR, FTS5's bm25 sometimes counts the NOT's
 * right-hand phrase in a row that matched through the other branch (when FTS5's iterator happens to rest on
 * that row: "file OR bcd NOT k8s" over a row holding file and k8s; a small table does not show it). The
 * block index, on Postgres as here, never counts it. The hits are equal; their rank can differ, and
 * FTS5's snippet then also marks that phrase.
 */
const rankedByFts5State = (q: string) => / NOT /.test(q) && / OR /.test(q);

const harness = await mariadbHarness();
const available = reportAvailability(harness);

describe.skipIf(!available)(
  `MariaDB search equals SQLite's on generated rows and queries${available ? '' : ` (skipped: ${harness.unavailable})`}`,
  () => {
    let sqlite: SessionStore;
    let mariadb: SessionStore;
    const clock = new TestClock();
    let session = 0;

    beforeAll(async () => {
      // One clock for both: equal times on both sides, so newest/oldest orders compare too.
      sqlite = await openStore(':memory:', { clock: clock.now });
      mariadb = await harness.open({ clock: clock.now });
    }, 60_000);
    afterAll(async () => {
      await sqlite?.close();
      await mariadb?.close();
      await harness.cleanup();
    });

    it('finds the same messages in the same order (150 generated corpora, 3 queries each)', async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.array(row, { minLength: 1, maxLength: 6 }),
          fc.array(query, { minLength: 3, maxLength: 3 }),
          async (rows, queries) => {
            const id = `s${session++}`;
            for (const store of [sqlite, mariadb]) await store.createSession(id, 'cli');
            for (const [i, content] of rows.entries()) {
              // Pairs of equal times: newest/oldest break them by rank.
              clock.set(TestClock.START + session * 100 + Math.floor(i / 2));
              const ids = [];
              for (const store of [sqlite, mariadb]) ids.push(await store.appendMessage(id, 'user', content));
              expect(ids[1]).toBe(ids[0]);
            }
            for (const q of queries)
              for (const sort of ['relevance', 'newest', 'oldest'] as const) {
                const expected = (await sqlite.searchMessages(q, { sort, limit: -1 })).map((h) => [h.id, h.snippet]);
                const got = (await mariadb.searchMessages(q, { sort, limit: -1 })).map((h) => [h.id, h.snippet]);
                if (rankedByFts5State(q)) {
                  // The named difference above: the same hits, ranked and highlighted as FTS5's iterators decide.
                  const ids = (hits: unknown[][]) => hits.map((h) => Number(h[0])).sort((a, b) => a - b);
                  expect(ids(got), `${q} (${sort})`).toEqual(ids(expected));
                } else expect(got, `${q} (${sort})`).toEqual(expected);
              }
          },
        ),
        { numRuns: 150 },
      );
    }, 600_000);
  },
);
