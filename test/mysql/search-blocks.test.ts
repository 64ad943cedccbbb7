/**
 * The block index on MariaDB (migration 0007) against FTS5 on SQLite (Hermes' own tables and SQL), through every
 * way a message changes: appended by the store past a merge of the recent segment, deleted with its session,
 * replaced by the store, and changed, inserted and deleted by SQL written around the store (row triggers queue
 * them). At each step every query returns the same ids in the same order on MariaDB as on SQLite, in each order.
 * A term longer than a key (a 12,000-character token) is merged and found whole and by prefix; a message of
 * 256 KB or more goes straight into the blocks (a recent-segment row of all its postings could outgrow a packet).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type MysqlBackend, type SessionStore, openStore } from '../../src/index.js';
import { MERGE_AT } from '../../src/db/mysql/search-blocks.js';
import { mariadbHarness, reportAvailability } from '../backends.js';
import { SCRIPT_WORDS, multilingualTexts } from '../helpers/multilingual.js';
import { TestClock, rawExec } from '../helpers/store-fixture.js';

/** More than one merge's worth, so the first search folds the recent segment into blocks. */
const MESSAGES = MERGE_AT + 600;
const SESSIONS = 40;
/** Appended after the first merge: they stay in the recent segment. */
const LATER = 300;
const texts = multilingualTexts(MESSAGES + LATER, 27);

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
  return [...out];
}

const harness = await mariadbHarness();
const available = reportAvailability(harness);

describe.skipIf(!available)(
  `block index against FTS5 [mariadb]${available ? '' : ` (skipped: ${harness.unavailable})`}`,
  () => {
    const stores: Record<string, SessionStore> = {};
    const all = () => Object.entries(stores);

    beforeAll(async () => {
      const open = async (name: string, make: (clock: TestClock) => Promise<SessionStore>) => {
        const store = await make(new TestClock());
        for (let s = 0; s < SESSIONS; s++) await store.createSession(`s${s}`, s % 3 === 0 ? 'cli' : 'telegram');
        await append(store, 0, MESSAGES);
        stores[name] = store;
      };
      await open('sqlite', (c) => openStore(':memory:', { clock: c.now }));
      await open('mariadb', (c) => harness.open({ clock: c.now }));
    }, 600_000);
    afterAll(async () => {
      for (const s of Object.values(stores)) await s.close();
      await harness.cleanup();
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

    async function expectSameAsSqlite(step: string, list = queries()) {
      const differences: string[] = [];
      // Each order once, with a filter and a deeper page in two of them.
      const pages = [
        { limit: 30, sort: 'relevance' as const },
        { limit: 10, offset: 10, sort: 'newest' as const, roleFilter: ['user'] },
        { limit: 20, sort: 'oldest' as const, sourceFilter: ['telegram'] },
      ];
      for (const query of list)
        for (const options of pages) {
          const expected = (await stores.sqlite!.searchMessages(query, options)).map((h) => [h.id, h.snippet]);
          const got = (await stores.mariadb!.searchMessages(query, options)).map((h) => [h.id, h.snippet]);
          if (JSON.stringify(got) !== JSON.stringify(expected))
            differences.push(
              `${step} ${query} ${JSON.stringify(options)}: ${JSON.stringify(got)} vs ${JSON.stringify(expected)}`,
            );
        }
      expect(differences).toEqual([]);
    }

    it('answers as FTS5 after appends that fill more than one merge', async () => {
      await expectSameAsSqlite('appended');
      // The first search tokenized every message and merged them into blocks.
      expect(await count('message_search_blocks')).toBeGreaterThan(0);
      for (const [, store] of all()) await append(store, MESSAGES, MESSAGES + LATER);
      await expectSameAsSqlite('appended after a merge');
      // Blocks and recent messages answered together.
      expect(await count('message_search_recent')).toBe(LATER);
      expect(await count(`message_search_merged WHERE messages >= ${MESSAGES}`)).toBe(2);
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
            const got = (await stores.mariadb!.searchMessages('ubiquitous', options)).map((h) => h.id);
            if (JSON.stringify(got) !== JSON.stringify(expected))
              differences.push(`${step} ${JSON.stringify(options)}: ${got} vs ${expected}`);
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
      // Times against ids, in pairs of equal times (ties go to bm25, then id), the same on both engines.
      const time = '1700000000 + ((id * 7919) % 1500) DIV 2';
      await rawExec(
        stores.sqlite!,
        `UPDATE messages SET timestamp = 1700000000 + ((id * 7919) % 1500) / 2 WHERE session_id = 'everywhere'`,
      );
      await rawExec(
        stores.mariadb!,
        `UPDATE messages SET timestamp = FROM_UNIXTIME(${time}) WHERE session_id = 'everywhere'`,
      );
      await pages('times against ids');
    }, 600_000);

    it('answers as FTS5 after deletes, replacements and SQL written around the store', async () => {
      for (const [name, store] of all()) {
        await store.deleteSession('s3');
        await store.replaceMessages('s5', [{ role: 'user', content: 'zzreplacedzz 東京大学 résumé' }]);
        // Merged messages (the oldest ids) and recent ones (the newest) changed, inserted and deleted by plain SQL.
        await rawExec(store, `UPDATE messages SET content = 'zzreplacedzz ' || content WHERE id % 97 = 0`);
        await rawExec(store, `DELETE FROM messages WHERE id % 89 = 0`);
        const time = name === 'sqlite' ? '1700000000' : 'FROM_UNIXTIME(1700000000)';
        await rawExec(
          store,
          `INSERT INTO messages (session_id, role, content, timestamp) VALUES ('s7', 'user', 'aroundstore Straße İstanbul', ${time})`,
        );
      }
      await expectSameAsSqlite('changed');
      expect(await count('message_search_removed')).toBe(0);
    }, 600_000);

    it('merges terms longer than a key (1,500 and 12,000 characters) and finds them whole and by prefix', async () => {
      const hex = (n: number, seed: number) =>
        Array.from({ length: n }, (_, i) => ((i * 7 + seed) % 16).toString(16)).join('');
      // A query is cut to 2,048 characters, as Hermes cuts it: the longer term is found by its prefix only.
      const [mid, huge] = [hex(1_500, 3), hex(12_000, 5)];
      for (const [, store] of all()) {
        await store.createSession('long', 'cli');
        await store.appendMessage('long', 'tool', `pasted ${mid} and ${huge} end`);
      }
      // More than a merge's worth of later messages: the long terms' postings are folded into blocks.
      for (const [, store] of all())
        for (let i = 0; i < MERGE_AT + 100; i += 500)
          await store.appendMessages(
            'long',
            texts.slice(i, i + 500).map((content) => ({ role: 'user', content })),
          );
      const list = [
        mid,
        `${mid.slice(0, 1_200)}*`,
        `${huge.slice(0, 40)}*`,
        `${huge.slice(0, 2_000)}*`,
        `pasted ${mid}`,
      ];
      await expectSameAsSqlite('long terms', list);
      // One block each in the word index (a trigram is never long).
      expect(await count('message_search_blocks WHERE full_term IS NOT NULL')).toBe(2);
      for (const q of list) expect((await stores.mariadb!.searchMessages(q)).length, q.slice(0, 50)).toBe(1);
    }, 600_000);

    it('folds a message whose postings outgrow a quarter of max_allowed_packet straight into the blocks', async () => {
      // One token of 1,500,000 CJK characters: 4.5 MB of word postings and 1.5 MB of trigrams, over 16 MB / 4.
      for (const [, store] of all()) {
        await store.createSession('big', 'cli');
        await store.appendMessage('big', 'assistant', `zzbigzz ${'漢'.repeat(1_500_000)} zzbigendzz`);
        await store.appendMessage('big', 'user', 'zzbigzz small one after it');
      }
      await expectSameAsSqlite('big message', ['zzbigzz', 'zzbigendzz', '"zzbigzz small"', 'zzbig*']);
      // The small message waits in the recent segment; the big one is in the blocks already.
      const [small, large] = await Promise.all(
        ['small', 'zzbigendzz'].map(async (q) => (await stores.mariadb!.searchMessages(q))[0]!.id),
      );
      expect(await count(`message_search_recent WHERE message_id = ${small}`)).toBe(1);
      expect(await count(`message_search_recent WHERE message_id = ${large}`)).toBe(0);
    }, 600_000);

    async function count(table: string): Promise<number> {
      return (stores.mariadb!.backend as MysqlBackend).withConnection(async (c) => {
        const [found] = await c.query(`SELECT COUNT(*) AS n FROM ${table}`);
        return Number((found as Array<{ n: unknown }>)[0]!.n);
      });
    }
  },
);
