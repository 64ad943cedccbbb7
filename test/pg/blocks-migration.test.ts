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
    },
  );
}
