/**
 * Search against Hermes itself: a 24,000-message Hermes-format state.db (Hermes' DDL and FTS triggers,
 * written by examples/hermes-state-db.ts) is imported into an SQLite store, and a few hundred generated
 * queries (common and rare words, phrases taken from the data, prefixes, OR, AND, NOT, code terms, CJK of
 * 2, 3 and 4 characters) must return what Hermes' own search SQL returns on the original file: the same ids
 * in the same order and the same snippets, in every sort mode, for every query under the rank cap.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type SessionStore, importHermesStateDb, openStore } from '../src/index.js';
import { DEFAULT_RANK_WINDOW } from '../src/repos/search.js';
import { type Harness, pgliteHarness, postgresHarness, reportAvailability, mariadbHarness } from './backends.js';
import { sharedHermesHistory } from './helpers/corpus-cache.js';
import { hermesMatchCount, hermesSearch, oracleQueries } from './helpers/hermes-oracle.js';

const MESSAGES = 24_000;
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hsdb-oracle-'));
let file: string;
let hermes: Database.Database;
let store: SessionStore;

/** The generated queries, 25 per class; each engine takes the first n of every class (the same queries everywhere). */
let generated: Array<{ cls: string; query: string }>;
const queriesPerClass = (n: number) => {
  const seen = new Map<string, number>();
  return generated.filter(({ cls }) => {
    seen.set(cls, (seen.get(cls) ?? 0) + 1);
    return seen.get(cls)! <= n;
  });
};

/** Hermes' answers, computed once per run and compared with every engine's. */
const answers = new Map<string, ReturnType<typeof hermesSearch>>();
const counts = new Map<string, number>();
const oracle = (query: string, options: { sort: 'newest' | 'oldest' | null; limit: number; offset?: number }) => {
  const key = JSON.stringify([query, options.sort, options.limit, options.offset ?? 0]);
  if (!answers.has(key)) answers.set(key, hermesSearch(hermes, query, options));
  return answers.get(key)!;
};
const overCap = (query: string) => {
  if (!counts.has(query)) counts.set(query, hermesMatchCount(hermes, query));
  return counts.get(query)! > DEFAULT_RANK_WINDOW;
};

beforeAll(async () => {
  file = await sharedHermesHistory({ messages: MESSAGES });
  store = await openStore(`sqlite:${path.join(dir, 'store.db')}`);
  await importHermesStateDb(file, store, { verify: false });
  hermes = new Database(file, { readonly: true });
  generated = oracleQueries(hermes, 25);
}, 300_000);

afterAll(async () => {
  hermes?.close();
  await store?.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

describe(`search oracle: Hermes' own SQL on a ${MESSAGES.toLocaleString('en')}-message state.db`, () => {
  it.each(['"to to the"', '"be be to"'])(
    'returns every match of the rare phrase %s, spread over the whole history, in Hermes order',
    async (phrase) => {
      // Its words are everywhere: thousands of messages hold all three, newer ones included, while the phrase
      // itself is in a handful of messages from the oldest to the newest. Each of them must be found.
      const found = hermesSearch(hermes, phrase, { limit: -1 });
      const ids = found.map((h) => h.id);
      expect(ids.length).toBeGreaterThanOrEqual(8);
      expect(Math.min(...ids)).toBeLessThan(MESSAGES * 0.2);
      expect(Math.max(...ids)).toBeGreaterThan(MESSAGES * 0.75);
      expect(hermesMatchCount(hermes, phrase.replace(/"/g, ''))).toBeGreaterThan(5000);
      const ours = await store.searchMessages(phrase, { limit: -1 });
      expect(ours.map((h) => h.id)).toEqual(ids);
      expect(ours.every((h) => h.rankedWithin === null)).toBe(true);
    },
  );

  it('returns the same ids, order and snippets as Hermes for every generated query under the cap', async () => {
    const queries = queriesPerClass(25);
    expect(queries.length).toBeGreaterThanOrEqual(250);
    const mismatches: string[] = [];
    let compared = 0;
    let nonEmpty = 0;
    for (const { cls, query } of queries) {
      for (const sort of [null, 'newest', 'oldest'] as const) {
        if (sort === null && overCap(query)) continue;
        for (const [limit, offset] of [
          [20, 0],
          [10, 45],
        ] as const) {
          const expected = oracle(query, { sort, limit, offset });
          const got = await store.searchMessages(query, { sort, limit, offset });
          compared++;
          if (expected.length > 0) nonEmpty++;
          const same =
            JSON.stringify(got.map((h) => [h.id, h.snippet])) ===
            JSON.stringify(expected.map((h) => [h.id, h.snippet]));
          if (!same) {
            const firstDiff = expected.findIndex((e, i) => got[i]?.id !== e.id || got[i]?.snippet !== e.snippet);
            mismatches.push(
              `${cls} ${JSON.stringify(query)} sort=${sort} offset=${offset}: at ${firstDiff} hermes ${JSON.stringify(expected[firstDiff])} ours ${JSON.stringify(got[firstDiff] && { id: got[firstDiff]!.id, snippet: got[firstDiff]!.snippet })} (${expected.length} vs ${got.length})`,
            );
          }
        }
      }
    }
    expect(mismatches.slice(0, 10)).toEqual([]);
    expect(compared).toBeGreaterThan(1000);
    // The comparison is not vacuous: most pages hold hits.
    expect(nonEmpty).toBeGreaterThan(compared * 0.6);
  }, 600_000);
});

/**
 * Postgres tokenizes and ranks as FTS5 does (the block index), so its top 20 is Hermes' top 20 in every class,
 * CJK included. Snippets of structured content may differ: jsonb keeps its keys in its own order (`text`
 * before `type`), where Hermes' JSON keeps the order it wrote them in.
 */
const pgHarnesses: Harness[] = [pgliteHarness(), await postgresHarness()];
for (const h of pgHarnesses) {
  const available = reportAvailability(h);
  describe.skipIf(!available)(
    `search oracle on Postgres: top 20 equal to Hermes' [${h.name}]${available ? '' : ` (skipped: ${h.unavailable})`}`,
    () => {
      let pg: SessionStore;
      beforeAll(async () => {
        pg = await h.open();
        await importHermesStateDb(file, pg, { verify: false });
      }, 600_000);
      afterAll(async () => {
        await pg?.close();
        await h.cleanup();
      });

      it("returns Hermes' top 20 (ids and order) for every query under the cap, CJK included, and Hermes' snippets for 99 % of hits, in every sort mode", async () => {
        const queries = queriesPerClass(15);
        let compared = 0;
        let same = 0;
        const differences: string[] = [];
        let snippets = 0;
        let sameSnippets = 0;
        const snippetDiffs: string[] = [];
        for (const { cls, query } of queries) {
          for (const sort of [null, 'newest', 'oldest'] as const) {
            if (sort === null && overCap(query)) continue;
            const expected = oracle(query, { sort, limit: 20 });
            const hits = await pg.searchMessages(query, { sort, limit: 20 });
            compared++;
            if (JSON.stringify(hits.map((x) => x.id)) === JSON.stringify(expected.map((x) => x.id))) same++;
            else differences.push(`${cls} ${JSON.stringify(query)} sort=${sort}`);
            const snippetOf = new Map(expected.map((x) => [x.id, x.snippet]));
            for (const hit of hits) {
              if (!snippetOf.has(hit.id)) continue;
              snippets++;
              if (snippetOf.get(hit.id) === hit.snippet) sameSnippets++;
              else if (snippetDiffs.length < 1)
                snippetDiffs.push(
                  `${JSON.stringify(snippetOf.get(hit.id)).slice(0, 120)} vs ${JSON.stringify(hit.snippet).slice(0, 120)}`,
                );
            }
          }
        }
        console.log(
          `[${h.name}] top 20 equal to Hermes for ${same} of ${compared} (${((100 * same) / compared).toFixed(1)} %); differing: ${differences.slice(0, 8).join('; ')}`,
        );
        console.log(
          `[${h.name}] snippets equal to Hermes for ${sameSnippets} of ${snippets}${snippetDiffs.length ? `; e.g. ${snippetDiffs[0]}` : ''}`,
        );
        expect(compared).toBeGreaterThan(400);
        expect(differences).toEqual([]);
        expect(sameSnippets / snippets).toBeGreaterThanOrEqual(0.99);
      }, 600_000);
    },
  );
}

/**
 * MariaDB searches the block index, tokenized as FTS5 tokenizes and ranked with FTS5's bm25 over the same texts
 * (it stores content and tool calls as SQLite does), so it must return exactly what Hermes returns, CJK included.
 */
const mariadb = await mariadbHarness();
const mariadbAvailable = reportAvailability(mariadb);
describe.skipIf(!mariadbAvailable)(
  `search oracle on MariaDB: equal to Hermes' own SQL${mariadbAvailable ? '' : ` (skipped: ${mariadb.unavailable})`}`,
  () => {
    let my: SessionStore;
    beforeAll(async () => {
      my = await mariadb.open();
      await importHermesStateDb(file, my, { verify: false });
    }, 600_000);
    afterAll(async () => {
      await my?.close();
      await mariadb.cleanup();
    });

    it('returns the same ids, order and snippets as Hermes for every generated query under the cap', async () => {
      const queries = queriesPerClass(12);
      const mismatches: string[] = [];
      let compared = 0;
      let nonEmpty = 0;
      for (const { cls, query } of queries) {
        for (const sort of [null, 'newest', 'oldest'] as const) {
          if (sort === null && overCap(query)) continue;
          const expected = oracle(query, { sort, limit: 20 });
          const got = await my.searchMessages(query, { sort, limit: 20 });
          compared++;
          if (expected.length > 0) nonEmpty++;
          if (
            JSON.stringify(got.map((h) => [h.id, h.snippet])) !== JSON.stringify(expected.map((h) => [h.id, h.snippet]))
          )
            mismatches.push(`${cls} ${JSON.stringify(query)} sort=${sort} (${expected.length} vs ${got.length})`);
        }
      }
      expect(mismatches.slice(0, 10)).toEqual([]);
      expect(compared).toBeGreaterThan(200);
      expect(nonEmpty).toBeGreaterThan(compared * 0.6);
    }, 600_000);
  },
);
