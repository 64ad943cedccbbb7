/**
 * Migrations 0007 (the block index) and 0008 (dropping the FULLTEXT table it replaced) on a populated MariaDB
 * store: no message or session changes; every message waits in the queue, the first search builds the index in
 * one pass (more than 5,000 queued messages), and search on the migrated store gives SQLite's answers for the
 * same data: words, phrases, prefixes, substrings and Hermes' LIKE scan for short CJK.
 */
import fs from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { prng } from '../../examples/hermes-state-db.js';
import { type MysqlBackend, type SessionStore, openStore } from '../../src/index.js';
import { mariadbHarness, reportAvailability, sqliteMemoryHarness } from '../backends.js';
import { folderUpTo, readJournal } from '../helpers/migration-folders.js';

const VOCABULARY = ['deploy', 'rollback', 'kubectl', 'latency', 'ingress', 'budget', 'token', 'vacuum', 'café', 'helm'];
const SESSIONS = 52;

/** Every kind of message: plain, structured, tool calls and results, CJK. */
async function fill(store: SessionStore): Promise<void> {
  const random = prng(5);
  const word = () => VOCABULARY[Math.floor(random() * VOCABULARY.length)]!;
  const sentence = (n: number) => Array.from({ length: n }, word).join(' ');
  for (let s = 0; s < SESSIONS; s++) {
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
          toolName: 'web_search',
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
}

const QUERIES = [
  'deploy',
  'cafe',
  '中文检索',
  '记忆断',
  '中文',
  'kubectl pods',
  '"rollback token"',
  'ingress OR latency',
  'budget NOT token',
  'item1*',
  'structured',
  'web_search',
  'search',
  'dep*',
  'helm OR vac* OR token',
];

const harness = await mariadbHarness();
const available = reportAvailability(harness);
const reference = sqliteMemoryHarness();
const tmpDirs: string[] = [];
afterAll(async () => {
  await reference.cleanup();
  await harness.cleanup();
  for (const d of tmpDirs) fs.rmSync(d, { recursive: true, force: true });
});

describe.skipIf(!available)(
  `migrations 0007/0008, block index [mariadb]${available ? '' : ` (skipped: ${harness.unavailable})`}`,
  () => {
    it('migrates a populated store from 0006 without changing a row, and then finds every message as SQLite does', async () => {
      const url = await harness.freshUrl();
      const upTo0006 = folderUpTo('mysql', '0006_session_activity_triggers');
      tmpDirs.push(upTo0006);
      const query = async (store: SessionStore, text: string) =>
        (store.backend as MysqlBackend).withConnection(
          async (c) => (await c.query(text))[0] as Array<Record<string, unknown>>,
        );
      const digest = async (store: SessionStore) =>
        (
          await query(
            store,
            // MD5 of each row, then of their list: GROUP_CONCAT of whole rows would be cut at group_concat_max_len.
            `SELECT (SELECT COUNT(*) FROM messages) AS n,
             (SELECT MD5(GROUP_CONCAT(MD5(CONCAT_WS('|', id, session_id, role, content, tool_calls, tool_name, timestamp)) ORDER BY id SEPARATOR '')) FROM messages) AS messages,
             (SELECT MD5(GROUP_CONCAT(MD5(CONCAT_WS('|', id, source, model, started_at, message_count)) ORDER BY id SEPARATOR '')) FROM sessions) AS sessions`,
          )
        ).map((r) => ({ n: Number(r.n), messages: String(r.messages), sessions: String(r.sessions) }))[0]!;

      const old = await openStore(url, { migrationsFolder: upTo0006 });
      let before: Awaited<ReturnType<typeof digest>>;
      try {
        expect((await old.migrationStatus()).applied).toEqual(readJournal(upTo0006).entries.map((e) => e.tag));
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
      expect(before.n).toBe(SESSIONS * 100);

      const store = await openStore(url);
      try {
        const status = await store.migrationStatus();
        expect(status.pending).toEqual([]);
        expect(status.applied).toContain('0007_message_search_blocks');
        expect(status.applied).toContain('0008_drop_fulltext_search');
        expect(await digest(store)).toEqual(before);
        const index = async () =>
          (
            await query(
              store,
              `SELECT (SELECT COUNT(*) FROM message_search_recent WHERE queued) AS queued,
               (SELECT COUNT(*) FROM message_search_recent) + (SELECT messages FROM message_search_merged WHERE kind = 0) AS indexed,
               (SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'message_search') AS ft`,
            )
          ).map((r) => ({ queued: Number(r.queued), indexed: Number(r.indexed), fulltext: Number(r.ft) }))[0]!;
        // Every message waits to be indexed; the first search builds the index of all of them in one pass.
        expect(await index()).toEqual({ queued: SESSIONS * 100, indexed: SESSIONS * 100, fulltext: 0 });
        expect((await store.searchMessages('deploy')).length).toBeGreaterThan(0);
        expect(await index()).toEqual({ queued: 0, indexed: SESSIONS * 100, fulltext: 0 });
        expect(Number((await query(store, 'SELECT COUNT(*) AS n FROM message_search_recent'))[0]!.n)).toBe(0);

        const sqlite = await reference.open();
        try {
          await fill(sqlite);
          const answer = async (s: SessionStore, q: string, sort: 'relevance' | 'newest') =>
            (await s.searchMessages(q, { limit: 30, sort })).map((hit) => [hit.id, hit.snippet]);
          for (const q of QUERIES)
            for (const sort of ['relevance', 'newest'] as const) {
              const expected = await answer(sqlite, q, sort);
              expect(expected.length, q).toBeGreaterThan(0);
              expect(await answer(store, q, sort), `${q} (${sort})`).toEqual(expected);
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
