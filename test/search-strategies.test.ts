/**
 * Postgres ranks word queries from its postings (migration 0005) in one of three ways, chosen by the query's
 * shape: merged id-ordered scans (an OR of words and prefixes), growing windows of the newest ids (a prefix of
 * more than 32 words), or one relation per query node (everything else, and every filtered search). Each must
 * give SQLite's answer (FTS5, Hermes' own engine): the same messages in the same order, the same cap report,
 * including when a merged read must be extended, a window grown, or a prefix has too many words to list.
 * A small rank window (searchRankWindow) makes every query here cross its cap.
 */
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { prng } from '../examples/hermes-state-db.js';
import type { MysqlBackend, PgBackend, SearchMessagesOptions, SessionStore, SqliteBackend } from '../src/index.js';
import {
  type Harness,
  pgliteHarness,
  postgresHarness,
  reportAvailability,
  sqliteFileHarness,
  mariadbHarness,
} from './backends.js';

const MESSAGES = 1500;

/** Deterministic messages that exercise each strategy (see the queries below). */
function messages(): Array<{ session: string; role: 'user' | 'assistant'; content: string }> {
  const random = prng(20261123);
  const out: Array<{ session: string; role: 'user' | 'assistant'; content: string }> = [];
  for (let i = 0; i < MESSAGES; i++) {
    const words: string[] = [`m${i}`];
    const filler = 2 + Math.floor(random() * 40); // document lengths from 3 to 60 words
    for (let k = 0; k < filler; k++) words.push(`w${Math.floor(random() * 300)}`);
    for (const [word, p] of [
      ['alpha', 0.35],
      ['beta', 0.3],
      ['gamma', 0.2],
      ['delta', 0.05],
    ] as const) {
      if (random() < p)
        for (let r = 1 + Math.floor(random() * 3); r > 0; r--)
          words.splice(Math.floor(random() * words.length), 0, word);
    }
    if (random() < 0.15) words.splice(Math.floor(random() * words.length), 0, 'alpha', 'beta');
    // 60 words under one prefix: more than the 32 scans merged in one statement. Denser in the newest 30
    // messages, so the first window, sized on the newest ids, comes up short and must grow.
    if (random() < (i >= MESSAGES - 30 ? 0.9 : 0.3)) words.push(`zq${Math.floor(random() * 60)}`);
    // About 1,200 words under one prefix: more than a prefix lists word by word.
    if (random() < 0.8) words.push(...(random() < 0.3 ? ['alpha'] : []), `yy${String(i).padStart(4, '0')}`);
    if (random() < 0.1) words.splice(Math.floor(random() * words.length), 0, 'alpha', `zq${Math.floor(random() * 60)}`);
    // Six words always together: six rows per message in a merged OR read, so the first read comes up short.
    if (random() < 0.2) words.push('k1', 'k2', 'k3', 'k4', 'k5', 'k6');
    out.push({ session: `s${i % 5}`, role: i % 3 === 0 ? 'assistant' : 'user', content: words.join(' ') });
  }
  return out;
}

const QUERIES = [
  'zq*', // windowed
  'zq* OR delta', // windowed (a prefix of 60 words in an OR)
  'yy*', // a prefix too wide to list: one key range
  'k1 OR k2 OR k3 OR k4 OR k5 OR k6', // merged, extended
  'alpha OR delta', // merged
  'alpha OR zq1*', // merged: a word and a prefix's words
  'alpha', // one word
  'alpha beta gamma', // AND
  'alpha NOT beta', // NOT
  'alpha OR beta NOT gamma', // a NOT under an OR
  '"alpha beta"', // phrase
  '"alpha zq"*', // phrase ending in a listed prefix
  '"alpha yy"*', // phrase ending in a prefix too wide to list
  'gamma "alpha beta"', // AND of a word and a phrase
];

const FILTERS: Array<[string, SearchMessagesOptions]> = [
  ['no filter', {}],
  ['role user', { roleFilter: ['user'] }],
  ['page 2', { offset: 25 }],
  ['newest', { sort: 'newest' }],
  ['oldest', { sort: 'oldest' }],
  ['newest, role user', { sort: 'newest', roleFilter: ['user'] }],
  ['oldest, page 2', { sort: 'oldest', offset: 25 }],
];

/**
 * Sets every message's time from its id, the same on every backend (appends take the clock's time, which differs
 * between runs): in order, 1,700,000,000 + i div 2; against ids, 1,700,000,000 + ((i * 7919) mod 1500) div 2. Both
 * give pairs of equal times, which newest/oldest break by rank; against ids, times cannot follow ids.
 */
async function setTimes(store: SessionStore, inOrder: boolean): Promise<void> {
  if (store.dialect === 'sqlite') {
    const time = inOrder ? 'CAST(id / 2 AS INTEGER)' : 'CAST(((id * 7919) % 1500) / 2 AS INTEGER)';
    (store.backend as SqliteBackend).client.exec(`UPDATE messages SET timestamp = 1700000000 + ${time} + 0.25`);
  } else if (store.dialect === 'mysql') {
    const time = inOrder ? 'id DIV 2' : '((id * 7919) % 1500) DIV 2';
    await (store.backend as MysqlBackend).pool.query(
      `UPDATE messages SET timestamp = FROM_UNIXTIME(1700000000 + ${time} + 0.25)`,
    );
  } else {
    const time = inOrder ? sql`id / 2` : sql`((id * 7919) % 1500) / 2`;
    await (store.backend as PgBackend).db.execute(
      sql`UPDATE messages SET timestamp = to_timestamp(1700000000 + ${time} + 0.25)`,
    );
  }
}

async function fill(store: SessionStore) {
  for (let s = 0; s < 5; s++) await store.createSession(`s${s}`, 'cli');
  for (const m of messages()) await store.appendMessage(m.session, m.role, m.content);
}

/** What a search returns: ids in order (the same messages on every backend, see below) and the cap report. */
async function answer(store: SessionStore, query: string, options: SearchMessagesOptions) {
  const hits = await store.searchMessages(query, { limit: 25, ...options });
  return hits.map((h) => `${h.id} ${h.rankedWithin ?? ''}`);
}

/** Every message as `id content`, so two stores can be shown to number the same messages alike. */
async function numbering(store: SessionStore): Promise<string[]> {
  const out: string[] = [];
  for (let s = 0; s < 5; s++) for (const m of await store.getMessages(`s${s}`)) out.push(`${m.id} ${m.content}`);
  return out;
}

/**
 * Every backend is filled once (the same appends in the same order) and closed; each rank window and time order
 * below reopens that database with its window and sets its times (setTimes rewrites every message's time).
 */
const reference = sqliteFileHarness();
const harnesses: Harness[] = [pgliteHarness(), await postgresHarness(), await mariadbHarness()];
const filled = new Map<Harness, string>();

beforeAll(async () => {
  for (const h of [reference, ...harnesses]) {
    if (h !== reference && !reportAvailability(h)) continue;
    const url = await h.freshUrl();
    const store = await h.openAt(url);
    await fill(store);
    await store.close();
    filled.set(h, url);
  }
}, 300_000);
afterAll(async () => {
  for (const h of [reference, ...harnesses]) await h.cleanup();
});

/** The filled database of `h`, reopened with the rank window `cap` and its times set. */
async function reopen(h: Harness, cap: number, inOrder: boolean): Promise<SessionStore> {
  const store = await h.openAt(filled.get(h)!, { searchRankWindow: cap });
  await setTimes(store, inOrder);
  return store;
}

for (const [cap, times] of [
  [40, 'in order'],
  [100_000, 'in order'],
  [40, 'against ids'],
  [100_000, 'against ids'],
] as const) {
  describe(`Postgres search strategies (and MariaDB's judged search) equal SQLite's answer (rank window ${cap}, times ${times})`, () => {
    const expected = new Map<string, string[]>();
    let sqlite: SessionStore;

    beforeAll(async () => {
      sqlite = await reopen(reference, cap, times === 'in order');
      for (const q of QUERIES)
        for (const [name, options] of FILTERS) expected.set(`${q} | ${name}`, await answer(sqlite, q, options));
      // The data does what the queries are for: every query finds a full page and, under the small window, crosses it.
      for (const q of QUERIES) {
        expect(expected.get(`${q} | no filter`)!.length, q).toBe(25);
        if (cap === 40) expect(expected.get(`${q} | no filter`)![0], q).toMatch(/^[0-9]+ 40$/);
      }
    }, 120_000);
    afterAll(async () => {
      await sqlite?.close();
    });

    for (const h of harnesses) {
      const available = reportAvailability(h);
      describe.skipIf(!available)(`[${h.name}]${available ? '' : ` (skipped: ${h.unavailable})`}`, () => {
        let store: SessionStore;
        // biome-ignore lint/suspicious/noDuplicateTestHooks: one describe per harness, each with its own store
        beforeAll(async () => {
          store = await reopen(h, cap, times === 'in order');
          expect(await numbering(store)).toEqual(await numbering(sqlite));
        }, 120_000);
        // biome-ignore lint/suspicious/noDuplicateTestHooks: one describe per harness, each with its own store
        afterAll(async () => {
          await store?.close();
        });

        for (const q of QUERIES) {
          it(`${q}`, async () => {
            for (const [name, options] of FILTERS)
              expect(await answer(store, q, options), `${q} | ${name}`).toEqual(expected.get(`${q} | ${name}`));
          });
        }
      });
    }
  });
}
