/**
 * The block index on Postgres and PGlite (migration 0010) against FTS5 on SQLite (Hermes' own tables and SQL),
 * through every way a message changes: appended by the store past a merge of the recent segment, deleted with
 * its session, replaced by the store, and changed, inserted and deleted by SQL written around the store. At
 * each step every query returns the same ids in the same order on each engine as on SQLite, in each order.
 */
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type PgBackend, type SessionStore, openStore } from '../../src/index.js';
import { rowsOf } from '../../src/db/pg/open.js';
import { MERGE_AT } from '../../src/db/pg/search-blocks.js';
import { type Harness, pgliteHarness, postgresHarness, reportAvailability } from '../backends.js';
import { SCRIPT_WORDS, multilingualTexts } from '../helpers/multilingual.js';
import { TestClock, rawExec } from '../helpers/store-fixture.js';

/** More than one merge's worth, so the first search folds the recent segment into blocks. */
const MESSAGES = MERGE_AT + 600;
const SESSIONS = 40;
/** Appended after the first merge: they stay in the recent segment. */
const LATER = 300;
const texts = multilingualTexts(MESSAGES + LATER, 27);
/**
 * Tokens longer than a term's key (term-key.ts), merged with the first segment: a pasted hex blob (longer than
 * a query, which is cut to 2,048 characters: found by prefix), a shorter one, a compressible one (such a term
 * fit a btree entry before migration 0012) and one of 2-byte letters cut inside the key. Each in two messages,
 * one of them in the session deleted later (its postings leave the long term's blocks).
 */
const hex = (length: number) =>
  Array.from({ length }, (_, i) => ((i * 7919 + (i >> 3) * 104729) % 16).toString(16)).join('');
const LONG_TOKENS = [hex(12_000), `f${hex(2_000)}`, 'ab'.repeat(1_000), `${'ж'.repeat(700)}x`];
for (const [i, token] of LONG_TOKENS.entries()) {
  texts[5 + 2 * i] += ` ${token} tail`;
  texts[305 + 2 * i] += ` ${token}`;
}

/** Words of every script, phrases, prefixes, boolean queries and substrings (CJK of 3+ characters). */
function queries(): string[] {
  const out = new Set<string>();
  for (const words of Object.values(SCRIPT_WORDS)) {
    for (const w of words.slice(0, 3)) out.add(w);
    if (words.length > 1) out.add(`"${words[0]} ${words[1]}"`);
    if (words[0]!.length > 3) out.add(`${[...words[0]!].slice(0, 2).join('')}*`);
    if (words.length > 2) {
      out.add(`${words[0]} OR ${words[2]}`);
      out.add(`${words[0]} NOT ${words[1]}`);
    }
  }
  for (const t of texts.slice(0, 40)) {
    const cjk = t.match(/[\u4e00-\u9fff\u3040-\u30ff]{3,}/u);
    if (cjk) out.add(cjk[0].slice(0, 3));
  }
  out.add('zzreplacedzz');
  out.add('aroundstore');
  for (const token of LONG_TOKENS) {
    out.add(token);
    out.add(`${token.slice(0, 10)}*`);
    // A prefix longer than the key: the key range holds more than its terms.
    out.add(`${token.slice(0, 1_200)}*`);
  }
  return [...out];
}

const pg = await postgresHarness();
const harnesses: Harness[] = [pgliteHarness(), pg];

describe('block index against FTS5', () => {
  const stores: Record<string, SessionStore> = {};
  const clocks: Record<string, TestClock> = {};
  const all = () => Object.entries(stores);

  beforeAll(async () => {
    const open = async (name: string, make: (clock: TestClock) => Promise<SessionStore>) => {
      clocks[name] = new TestClock();
      const store = await make(clocks[name]!);
      for (let s = 0; s < SESSIONS; s++) await store.createSession(`s${s}`, s % 3 === 0 ? 'cli' : 'telegram');
      await append(store, 0, MESSAGES);
      stores[name] = store;
    };
    await open('sqlite', (c) => openStore(':memory:', { clock: c.now }));
    for (const h of harnesses) if (reportAvailability(h)) await open(h.name, (c) => h.open({ clock: c.now }));
  }, 600_000);
  afterAll(async () => {
    for (const s of Object.values(stores)) await s.close();
    for (const h of harnesses) await h.cleanup();
  });

  async function append(store: SessionStore, from: number, to: number) {
    for (let i = from; i < to; i += 100)
      await store.appendMessages(
        `s${(i / 100) % SESSIONS}`,
        texts
          .slice(i, Math.min(to, i + 100))
          .map((content, k) => ({ role: (i + k) % 2 === 0 ? 'user' : 'assistant', content })),
      );
  }

  async function expectSameAsSqlite(step: string) {
    const differences: string[] = [];
    // Each order once, with a filter and a deeper page in two of them.
    const pages = [
      { limit: 30, sort: 'relevance' as const },
      { limit: 10, offset: 10, sort: 'newest' as const, roleFilter: ['user'] },
      { limit: 20, sort: 'oldest' as const, sourceFilter: ['telegram'] },
    ];
    for (const query of queries())
      for (const options of pages) {
        const expected = (await stores.sqlite!.searchMessages(query, options)).map((h) => h.id);
        for (const [name, store] of all()) {
          if (name === 'sqlite') continue;
          const got = (await store.searchMessages(query, options)).map((h) => h.id);
          if (JSON.stringify(got) !== JSON.stringify(expected))
            differences.push(`${step} ${name} ${query} ${JSON.stringify(options)}: ${got} vs ${expected}`);
        }
      }
    expect(differences).toEqual([]);
  }

  it('answers as FTS5 after appends that fill more than one merge', async () => {
    await expectSameAsSqlite('appended');
    // The first search tokenized every message and merged them into blocks.
    for (const [name, store] of all())
      if (name !== 'sqlite') {
        expect(await count(store, 'message_search_blocks'), name).toBeGreaterThan(0);
        // The long tokens were merged, whole beside their keys, and are found (not only in empty answers).
        expect(await count(store, 'message_search_blocks WHERE full_term IS NOT NULL'), name).toBe(LONG_TOKENS.length);
      }
    for (const token of LONG_TOKENS.slice(1))
      expect((await stores.sqlite!.searchMessages(token)).length, token.slice(0, 9)).toBe(2);
    expect((await stores.sqlite!.searchMessages(`${LONG_TOKENS[0]!.slice(0, 10)}*`)).length).toBe(2);
    for (const [, store] of all()) await append(store, MESSAGES, MESSAGES + LATER);
    await expectSameAsSqlite('appended after a merge');
    // Blocks and recent messages answered together.
    for (const [name, store] of all()) {
      if (name === 'sqlite') continue;
      expect(await count(store, 'message_search_recent'), name).toBe(LATER);
      expect(await count(store, `message_search_merged WHERE messages >= ${MESSAGES}`), name).toBe(2);
    }
  }, 600_000);

  it('orders a word in every message of a session by time as FTS5, times with ids and against them', async () => {
    const pages = async (step: string) => {
      const differences: string[] = [];
      for (const sort of ['newest', 'oldest', 'relevance'] as const)
        for (const options of [
          { limit: 50, sort },
          { limit: 30, offset: 100, sort, roleFilter: ['user'] },
        ]) {
          const expected = (await stores.sqlite!.searchMessages('ubiquitous', options)).map((h) => h.id);
          expect(expected.length).toBeGreaterThan(0);
          for (const [name, store] of all()) {
            if (name === 'sqlite') continue;
            const got = (await store.searchMessages('ubiquitous', options)).map((h) => h.id);
            if (JSON.stringify(got) !== JSON.stringify(expected))
              differences.push(`${step} ${name} ${JSON.stringify(options)}: ${got} vs ${expected}`);
          }
        }
      expect(differences).toEqual([]);
    };
    for (const [, store] of all()) {
      await store.createSession('everywhere', 'cli');
      for (let i = 0; i < 2_500; i += 500)
        await store.appendMessages(
          'everywhere',
          Array.from({ length: 500 }, (_, k) => ({
            role: k % 2 === 0 ? 'user' : 'assistant',
            content: `ubiquitous ${'filler '.repeat((i + k) % 7)}${i + k}`,
          })),
        );
    }
    await pages('times with ids');
    // Times against ids, in pairs of equal times (ties go to bm25, then id), the same on every engine.
    const time = '1700000000 + ((id * 7919) % 1500) / 2';
    for (const [, store] of all())
      await rawExec(
        store,
        `UPDATE messages SET timestamp = ${store.dialect === 'sqlite' ? time : `to_timestamp(${time})`} WHERE session_id = 'everywhere'`,
      );
    await pages('times against ids');
  }, 600_000);

  it('answers as FTS5 after deletes, replacements and SQL written around the store', async () => {
    for (const [, store] of all()) {
      await store.deleteSession('s3');
      await store.replaceMessages('s5', [{ role: 'user', content: 'zzreplacedzz 東京大学 résumé' }]);
      // Merged messages (the oldest ids) and recent ones (the newest) changed, inserted and deleted by plain SQL.
      await rawExec(store, `UPDATE messages SET content = 'zzreplacedzz ' || content WHERE id % 97 = 0`);
      await rawExec(store, `DELETE FROM messages WHERE id % 89 = 0`);
      const time = store.dialect === 'sqlite' ? '1700000000' : 'to_timestamp(1700000000)';
      await rawExec(
        store,
        `INSERT INTO messages (session_id, role, content, timestamp) VALUES ('s7', 'user', 'aroundstore Straße İstanbul', ${time})`,
      );
    }
    await expectSameAsSqlite('changed');
    for (const [name, store] of all()) {
      if (name === 'sqlite') continue;
      expect(await count(store, 'message_search_removed'), name).toBe(0);
    }
  }, 600_000);
});

async function count(store: SessionStore, table: string): Promise<number> {
  const found = rowsOf<{ n: number }>(
    await (store.backend as PgBackend).db.execute(sql.raw(`SELECT count(*)::int AS n FROM ${table}`)),
  );
  return Number(found[0]!.n);
}
