/**
 * Migrations 0010 (the block index, replacing 0005's per-word postings) and 0011 (dropping 0002/0004's word
 * vector, trigram index and totals) on a populated store: no message or session changes; every message waits in
 * the queue, the first search indexes all of them, and search on the migrated store gives SQLite's answer for the
 * same data, words, phrases, prefixes and substrings.
 */
import fs from 'node:fs';
import { sql } from 'drizzle-orm';
import { afterAll, describe, expect, it } from 'vitest';
import { prng } from '../../examples/hermes-state-db.js';
import { type PgBackend, type SessionStore, openStore } from '../../src/index.js';
import { rowsOf } from '../../src/db/pg/open.js';
import { type Harness, pgliteHarness, postgresHarness, reportAvailability, sqliteMemoryHarness } from '../backends.js';
import { pgFolderUpTo, readJournal } from '../helpers/migration-folders.js';

const rowsOfStore = async <T>(store: SessionStore, query: ReturnType<typeof sql>) =>
  rowsOf<T>(await (store.backend as PgBackend).db.execute(query));

const VOCABULARY = [
  'deploy',
  'rollback',
  'kubectl',
  'latency',
  'ingress',
  'budget',
  'token',
  'vacuum',
  'postgres',
  'helm',
];

/** Every kind of message: plain, structured, tool calls and results, CJK, and one past each tsvector limit. */
async function fill(store: SessionStore): Promise<void> {
  const random = prng(5);
  const word = () => VOCABULARY[Math.floor(random() * VOCABULARY.length)]!;
  const sentence = (n: number) => Array.from({ length: n }, word).join(' ');
  for (let s = 0; s < 20; s++) {
    const sid = `session-${s}`;
    await store.createSession(sid, s % 3 === 0 ? 'telegram' : 'cli', { model: 'gpt-5' });
    const batch = [];
    for (let i = 0; i < 100; i++) {
      const k = i % 10;
      if (k === 0) batch.push({ role: 'assistant', content: [{ type: 'text', text: `structured ${sentence(6)}` }] });
      else if (k === 1) {
        batch.push({
          role: 'assistant',
          content: null,
          toolCalls: [
            {
              id: `call_${s}_${i}`,
              type: 'function',
              function: { name: 'terminal', arguments: JSON.stringify({ cmd: `kubectl ${word()} pods` }) },
            },
          ],
        });
      } else if (k === 2)
        batch.push({
          role: 'tool',
          content: JSON.stringify({ output: sentence(12) }),
          toolCallId: `call_${s}_${i - 1}`,
          toolName: 'terminal',
        });
      else if (k === 3) batch.push({ role: 'user', content: `记忆断裂 ${sentence(4)} 中文检索 ${i}` });
      else
        batch.push({
          role: k % 2 === 0 ? 'user' : 'assistant',
          content: `${sentence(3 + Math.floor(random() * 30))} item${s}x${i}`,
        });
    }
    await store.appendMessages(sid, batch);
  }
  // A word 300 times (a tsvector keeps 256 positions) and 20,000 words (positions stop at 16,383).
  await store.appendMessage('session-0', 'tool', `${'repeated '.repeat(300)}end`);
  await store.appendMessage('session-1', 'tool', Array.from({ length: 20_000 }, (_, i) => `long${i % 500}`).join(' '));
}

const QUERIES = [
  'deploy',
  '中文检索',
  '记忆断',
  'kubectl pods',
  '"rollback postgres"',
  'ingress OR latency',
  'budget NOT token',
  'item1*',
  'structured',
  'terminal',
  'dep*',
  'helm OR vac* OR token',
];

const harnesses: Harness[] = [pgliteHarness(), await postgresHarness()];
const reference = sqliteMemoryHarness();
const tmpDirs: string[] = [];
afterAll(async () => {
  await reference.cleanup();
  for (const d of tmpDirs) fs.rmSync(d, { recursive: true, force: true });
});

for (const h of harnesses) {
  const available = reportAvailability(h);
  describe.skipIf(!available)(
    `migration 0010, block index [${h.name}]${available ? '' : ` (skipped: ${h.unavailable})`}`,
    () => {
      afterAll(() => h.cleanup());

      it('migrates a populated store from 0009 without changing a row, and then finds every message as SQLite does', async () => {
        const url = await h.freshUrl();
        const upTo0009 = pgFolderUpTo('0009_session_activity_triggers');
        tmpDirs.push(upTo0009);
        // Sessions as the old migration wrote them: the activity columns are added (and filled) by 0008/0009.
        const digest = async (store: SessionStore) =>
          (
            await rowsOfStore<{ n: number; messages: string; sessions: string }>(
              store,
              // Every column but the two 0011 drops (search_cjk, which stays, included).
              sql`SELECT (SELECT count(*)::int FROM messages) AS n,
                  (SELECT md5(string_agg((to_jsonb(m) - 'search_vector' - 'search_length')::text, E'\n' ORDER BY m.id)) FROM messages m) AS messages,
                  (SELECT md5(string_agg((to_jsonb(s) - 'last_message_at' - 'chain_last_active')::text, E'\n' ORDER BY s.id)) FROM sessions s) AS sessions`,
            )
          )[0]!;

        const old = await openStore(url, { migrationsFolder: upTo0009 });
        let before: Awaited<ReturnType<typeof digest>>;
        try {
          expect((await old.migrationStatus()).applied).toEqual(readJournal(upTo0009).entries.map((e) => e.tag));
          await fill(old);
          before = await digest(old);
          // Until migrated, word and substring search say what is missing instead of failing on a table.
          await expect(old.searchMessages('deploy')).rejects.toMatchObject({
            name: 'MigrationError',
            reason: 'SEARCH_NEEDS_MIGRATION',
          });
        } finally {
          await old.close();
        }
        expect(before.n).toBe(2002);

        const store = await openStore(url);
        try {
          const status = await store.migrationStatus();
          expect(status.pending).toEqual([]);
          expect(status.applied).toContain('0010_message_search_blocks');
          expect(status.applied).toContain('0011_drop_replaced_search_structures');
          expect(await digest(store)).toEqual(before);
          const [dropped] = await rowsOfStore<{ n: number }>(
            store,
            sql`SELECT (SELECT count(*)::int FROM pg_attribute WHERE attrelid = 'messages'::regclass
                  AND attname IN ('search_vector', 'search_length') AND NOT attisdropped)
              + (SELECT count(*)::int FROM pg_class WHERE relname IN ('message_search_stats', 'idx_messages_search_vector', 'idx_messages_search_trgm')) AS n`,
          );
          expect(dropped!.n).toBe(0);
          // Every message waits to be indexed; the first search indexes them all, in bounded pieces.
          const index = async () =>
            (
              await rowsOfStore<{ queued: number; indexed: number; tables: number }>(
                store,
                sql`SELECT (SELECT count(*)::int FROM message_search_recent WHERE words IS NULL) AS queued,
                  (SELECT count(*)::int FROM message_search_recent)
                    + (SELECT messages::int FROM message_search_merged WHERE kind = 0) AS indexed,
                  (SELECT count(*)::int FROM pg_class WHERE relname = 'message_search_terms') AS tables`,
              )
            )[0]!;
          expect(await index()).toEqual({ queued: 2002, indexed: 2002, tables: 0 });
          expect((await store.searchMessages('deploy')).length).toBeGreaterThan(0);
          expect(await index()).toEqual({ queued: 0, indexed: 2002, tables: 0 });

          // Search on the migrated store answers as SQLite does on the same data.
          const sqlite = await reference.open();
          try {
            await fill(sqlite);
            // Both stores number the messages alike (same order of writes), so ids compare.
            const messages = async (s: SessionStore) =>
              (await s.getMessages('session-7')).map(
                (m) => `${m.id} ${m.role} ${typeof m.content === 'string' ? m.content : ''}`,
              );
            expect(await messages(store)).toEqual(await messages(sqlite));
            const answer = async (s: SessionStore, q: string) =>
              (await s.searchMessages(q, { limit: 30 })).map((hit) => hit.id);
            for (const q of QUERIES) {
              const expected = await answer(sqlite, q);
              expect(expected.length, q).toBeGreaterThan(0);
              expect(await answer(store, q), q).toEqual(expected);
            }
          } finally {
            await sqlite.close();
          }
        } finally {
          await store.close();
        }
      }, 300_000);

      // Before 0012 a term was its own key: one short enough for a btree entry was merged under it.
      it('migration 0012 moves a long term merged under its old key to its bounded key, without losing its postings', async () => {
        const url = await h.freshUrl();
        const store = await openStore(url);
        const long = 'ab'.repeat(1_000);
        try {
          await store.createSession('s', 'cli');
          const first = await store.appendMessage('s', 'user', `before ${long}`);
          await store.appendMessages(
            's',
            Array.from({ length: 2_100 }, (_, i) => ({ role: 'user', content: `filler ${i}` })),
          );
          const second = await store.appendMessage('s', 'user', `after ${long} again`);
          expect((await store.searchMessages('filler', { limit: 1 })).length).toBe(1);
          // The store as 0011's code left it: the long term keyed by itself, no full_term, 0012 not recorded.
          const [history] = await rowsOfStore<{ schema: string }>(
            store,
            sql`SELECT table_schema AS schema FROM information_schema.tables WHERE table_name = '__hermes_sessiondb_migrations'`,
          );
          const table = `"${history!.schema}".__hermes_sessiondb_migrations`;
          for (const statement of [
            'UPDATE message_search_blocks SET term = full_term WHERE full_term IS NOT NULL',
            'ALTER TABLE message_search_blocks DROP COLUMN full_term',
            `DELETE FROM ${table} WHERE id = (SELECT max(id) FROM ${table})`,
          ])
            await (store.backend as PgBackend).db.execute(sql.raw(statement));
          const [old] = await rowsOfStore<{ n: number }>(
            store,
            sql`SELECT count(*)::int AS n FROM message_search_blocks WHERE octet_length(term) = 2000`,
          );
          expect(old!.n).toBe(1);
          await store.close();
          const migrated = await openStore(url);
          try {
            expect((await migrated.migrationStatus()).applied.at(-1)).toBe('0012_long_term_keys');
            // The merged message and the recent one, found by the whole term and by prefix.
            expect((await migrated.searchMessages(long)).map((h) => h.id).sort()).toEqual([first, second]);
            expect((await migrated.searchMessages('abab*')).map((h) => h.id).sort()).toEqual([first, second]);
            // Its postings leave the moved block when the message goes.
            await migrated.appendMessages(
              's',
              Array.from({ length: 2_100 }, (_, i) => ({ role: 'user', content: `more ${i}` })),
            );
            expect((await migrated.searchMessages('more', { limit: 1 })).length).toBe(1);
            await rawDelete(migrated, first);
            expect((await migrated.searchMessages(long)).map((h) => h.id)).toEqual([second]);
            const [moved] = await rowsOfStore<{ n: number; merged: number }>(
              migrated,
              sql`SELECT count(*)::int AS n, COALESCE(sum(count), 0)::int AS merged FROM message_search_blocks
                WHERE full_term = convert_to(${long}, 'UTF8')`,
            );
            expect(moved).toEqual({ n: 1, merged: 1 });
          } finally {
            await migrated.close();
          }
        } finally {
          await store.close();
        }
      }, 300_000);
    },
  );
}

async function rawDelete(store: SessionStore, id: number): Promise<void> {
  await (store.backend as PgBackend).db.execute(sql`DELETE FROM messages WHERE id = ${id}`);
  // The next search takes the removed message out of the blocks.
  await store.searchMessages('filler', { limit: 1 });
}
