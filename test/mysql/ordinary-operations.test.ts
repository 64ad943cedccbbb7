/**
 * MySQL/MariaDB under ordinary operations (issue 25, part 3): a vacuum keeps every word searchable, the ids
 * appendMessages returns are the rows' ids whatever auto_increment_increment is, a user with SELECT only can
 * search, and a failed id reservation leaves its pooled connection's foreign-key checks on.
 */
import mysql from 'mysql2/promise';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { epochSecondsToDatetime } from '../../src/codecs/time.js';
import { type SessionStore, openStore } from '../../src/index.js';
import { reportAvailability, MYSQL_URL, mariadbHarness } from '../backends.js';
import { TestClock } from '../helpers/store-fixture.js';

const harness = await mariadbHarness();
const available = reportAvailability(harness);
const DAY = 86_400;

type Hits = Array<[number, string | null]>;
const answers = async (store: SessionStore, q: string, sort: 'relevance' | 'newest' | 'oldest'): Promise<Hits> =>
  (await store.searchMessages(q, { sort, limit: -1 })).map((h) => [h.id, h.snippet]);

/** Open a store on MariaDB and one in SQLite (FTS5, Hermes' engine) sharing one clock. */
async function pair(clock: TestClock, options: { poolSize?: number } = {}) {
  const url = await harness.freshUrl();
  const mariadb = await openStore(url, { clock: clock.now, ...options });
  const sqlite = await openStore(':memory:', { clock: clock.now });
  return { url, mariadb, sqlite, stores: [sqlite, mariadb] as const };
}

describe.skipIf(!available)(
  `MySQL/MariaDB under ordinary operations${available ? '' : ` (skipped: ${harness.unavailable})`}`,
  () => {
    afterAll(() => harness.cleanup());

    describe('vacuum keeps the search index: stopwords and common words answer as SQLite', () => {
      const QUERIES = ['about', 'will', 'with', '"about the"', 'the', 'deploy'];
      const clock = new TestClock();
      let p: Awaited<ReturnType<typeof pair>>;

      beforeAll(async () => {
        p = await pair(clock);
        for (const store of p.stores) {
          // One old ended session for the automatic prune to remove (then it vacuums).
          clock.set(TestClock.START - 200 * DAY);
          await store.createSession('old', 'cli');
          await store.endSession('old', 'done');
          clock.set(TestClock.START);
          await store.createSession('s', 'cli');
          await store.appendMessages('s', [
            { role: 'user', content: 'Tell me about the deploy' },
            { role: 'assistant', content: 'I will deploy it with the new config' },
            { role: 'user', content: 'what about the rollback, will it work with this?' },
            { role: 'assistant', content: 'It is about the same as before' },
          ]);
        }
      }, 60_000);
      afterAll(async () => {
        await p?.mariadb.close();
        await p?.sqlite.close();
      });

      async function expectSameAsSqlite(when: string) {
        for (const q of QUERIES)
          for (const sort of ['relevance', 'newest'] as const) {
            const expected = await answers(p.sqlite, q, sort);
            expect(expected.length, q).toBeGreaterThan(0);
            expect(await answers(p.mariadb, q, sort), `${q} (${sort}) ${when}`).toEqual(expected);
          }
      }

      it('answers common words and a phrase of them as SQLite does, before and after vacuum()', async () => {
        await expectSameAsSqlite('before vacuum');
        await p.mariadb.vacuum();
        await expectSameAsSqlite('after vacuum()');
      });

      it('and after maybeAutoPruneAndVacuum() pruned a session and vacuumed', async () => {
        for (const store of p.stores)
          expect(await store.maybeAutoPruneAndVacuum({ retentionDays: 90 })).toEqual({
            skipped: false,
            pruned: 1,
            vacuumed: true,
          });
        await expectSameAsSqlite('after maybeAutoPruneAndVacuum()');
      });
    });

    it('appendMessages returns the ids the rows got when auto_increment_increment is 2', async () => {
      // One pooled connection: the session setting applies to every statement of the store.
      const store = await openStore(await harness.freshUrl(), { poolSize: 1 });
      try {
        if (store.dialect !== 'mysql') throw new Error('expected a MySQL store');
        await store.backend.withConnection((c) => c.query('SET SESSION auto_increment_increment = 2'));
        await store.createSession('s', 'cli');
        const single = await store.appendMessage('s', 'user', 'one');
        const many = await store.appendMessages('s', [
          { role: 'user', content: 'two' },
          { role: 'assistant', content: 'three' },
          { role: 'user', content: 'four' },
        ]);
        const rows = await store.getMessages('s');
        expect(rows.map((m) => [m.id, m.content])).toEqual([
          [single, 'one'],
          [many[0], 'two'],
          [many[1], 'three'],
          [many[2], 'four'],
        ]);
        // The setting was in force: the ids step by 2.
        expect(many[1]! - many[0]!).toBe(2);
      } finally {
        await store.close();
      }
    });

    it('a user with SELECT only searches, with the answers of SQLite (tokenizing the queued messages in memory)', async () => {
      const clock = new TestClock();
      const p = await pair(clock);
      const user = `hsdb_ro_${process.pid}`;
      const admin = await mysql.createConnection({ uri: MYSQL_URL });
      let reader: SessionStore | undefined;
      try {
        const database = new URL(p.url).pathname.slice(1);
        const filler = (n: number) => Array.from({ length: n }, (_, i) => `word${i % 37}`).join(' ');
        for (const store of p.stores) {
          await store.createSession('s', 'cli');
          // Rows without the query's words: bm25's average length decides which of the two deploy rows ranks
          // first. The writer's search indexes the four short rows; the later ones stay queued.
          for (let i = 0; i < 4; i++) await store.appendMessage('s', 'user', filler(3));
          await store.searchMessages('word1');
          for (let i = 0; i < 4; i++) await store.appendMessage('s', 'user', filler(150));
          await store.appendMessage('s', 'user', 'deploy now please');
          await store.appendMessage('s', 'assistant', `deploy deploy ${filler(20)} rollback`);
        }
        await admin.query(`DROP USER IF EXISTS '${user}'@'%'`);
        await admin.query(`CREATE USER '${user}'@'%'`);
        await admin.query(`GRANT SELECT ON \`${database}\`.* TO '${user}'@'%'`);
        const url = new URL(p.url);
        url.username = user;
        url.password = '';
        // Opened as any app opens a store (the migrator finds nothing to do and writes nothing).
        reader = await openStore(url.toString(), { clock: clock.now });
        for (const q of ['deploy', 'deploy OR rollback', 'word3', 'now OR rollback OR word1'])
          for (const sort of ['relevance', 'newest'] as const) {
            const expected = await answers(p.sqlite, q, sort);
            expect(expected.length, q).toBeGreaterThan(0);
            expect(await answers(reader, q, sort), `${q} (${sort})`).toEqual(expected);
          }
        // Nothing was written: the six messages appended after the writer's search are still queued for a writer.
        const [left] = await admin.query(
          `SELECT COUNT(*) AS n FROM \`${database}\`.message_search_recent WHERE queued`,
        );
        expect(Number((left as Array<{ n: unknown }>)[0]!.n)).toBe(6);
      } finally {
        await reader?.close();
        await admin.query(`DROP USER IF EXISTS '${user}'@'%'`);
        await admin.end();
        await p.mariadb.close();
        await p.sqlite.close();
      }
    });

    it('a failed id reservation leaves its pooled connection with foreign-key checks on', async () => {
      const url = await harness.freshUrl();
      const store = await openStore(url, { poolSize: 1 });
      const other = await mysql.createConnection({ uri: url });
      const watch = await mysql.createConnection({ uri: url });
      try {
        if (store.dialect !== 'mysql') throw new Error('expected a MySQL store');
        await store.createSession('s', 'cli');
        // Another writer takes id 1000 and holds it: the reservation's insert waits, then meets the duplicate.
        await other.query('START TRANSACTION');
        await other.query(
          "INSERT INTO messages (id, session_id, role, timestamp) VALUES (1000, 's', 'user', '2026-01-01 00:00:00')",
        );
        const reserving = store.imports.reserveIds(1000).then(
          () => null,
          (e: unknown) => e,
        );
        // The insert has been waiting for the other writer's row for a while (it takes microseconds otherwise).
        for (;;) {
          const [waiting] = await watch.query(
            "SELECT COUNT(*) AS n FROM information_schema.PROCESSLIST WHERE info LIKE 'INSERT INTO messages (id, %' AND time_ms > 200",
          );
          if (Number((waiting as Array<{ n: unknown }>)[0]!.n) > 0) break;
          await new Promise((r) => setTimeout(r, 20));
        }
        await other.query('COMMIT');
        expect(await reserving).toBeInstanceOf(Error);

        // The store's one connection, as the failed reservation left it: an orphan message is refused.
        const orphan = await store.backend
          .withConnection((c) =>
            c.query("INSERT INTO messages (session_id, role, timestamp) VALUES ('no-such-session', 'user', ?)", [
              epochSecondsToDatetime(TestClock.START),
            ]),
          )
          .then(
            () => null,
            (e: unknown) => e,
          );
        expect((orphan as { errno?: unknown } | null)?.errno).toBe(1452);
        const fk = await store.backend.withConnection(async (c) => {
          const [found] = await c.query('SELECT @@foreign_key_checks AS fk');
          return Number((found as Array<{ fk: unknown }>)[0]!.fk);
        });
        expect(fk).toBe(1);
        expect(await store.messageCount()).toBe(1);
      } finally {
        await other.end();
        await watch.end();
        await store.close();
      }
    });
  },
);
