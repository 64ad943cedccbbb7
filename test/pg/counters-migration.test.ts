/**
 * Migration 0006 (session counters to bigint) rewrites the sessions table: on a populated 0005 store, every
 * session row and every message is the same afterwards, search answers as on a store created at the latest migration, and the counters that
 * were stuck below 2^31 go past it.
 */
import fs from 'node:fs';
import { sql } from 'drizzle-orm';
import { afterAll, describe, expect, it } from 'vitest';
import { prng } from '../../examples/hermes-state-db.js';
import { type PgBackend, type SessionStore, openStore } from '../../src/index.js';
import { rowsOf } from '../../src/db/pg/open.js';
import { type Harness, pgliteHarness, postgresHarness, reportAvailability } from '../backends.js';
import { pgFolderUpTo, readJournal } from '../helpers/migration-folders.js';

const rowsOfStore = async <T>(store: SessionStore, query: ReturnType<typeof sql>) =>
  rowsOf<T>(await (store.backend as PgBackend).db.execute(query));

const INT32_MAX = 2 ** 31 - 1;
const WORDS = ['deploy', 'rollback', 'kubectl', 'latency', 'ingress', 'budget', '记忆断裂', 'helm'];

/** Sessions of every shape (parents, titles, ended, handoffs, costs, NULL costs) with their messages. */
async function fill(store: SessionStore): Promise<void> {
  const random = prng(11);
  const word = () => WORDS[Math.floor(random() * WORDS.length)]!;
  for (let s = 0; s < 40; s++) {
    const id = `session-${s}`;
    await store.createSession(id, s % 4 === 0 ? 'telegram' : 'cli', {
      model: s % 3 === 0 ? null : 'gpt-5',
      modelConfig: s % 5 === 0 ? { temperature: 0.2, tools: ['terminal'] } : null,
      systemPrompt: s % 2 === 0 ? `prompt ${s}` : null,
      parentSessionId: s > 0 && s % 7 === 0 ? `session-${s - 1}` : null,
    });
    if (s % 3 !== 2) {
      await store.updateTokenCounts(id, {
        inputTokens: Math.floor(random() * 5e9),
        outputTokens: Math.floor(random() * 1e6),
        cacheReadTokens: s,
        reasoningTokens: s * 3,
        apiCallCount: Math.floor(random() * 1000),
        estimatedCostUsd: random(),
        actualCostUsd: s % 2 === 0 ? random() : null,
        costStatus: 'estimated',
        billingProvider: 'openrouter',
      });
    }
    await store.appendMessages(
      id,
      Array.from({ length: 25 }, (_, i) =>
        i % 5 === 1
          ? {
              role: 'assistant',
              content: null,
              toolCalls: [
                {
                  id: `c${s}_${i}`,
                  type: 'function',
                  function: { name: 'terminal', arguments: `{"cmd":"${word()}"}` },
                },
              ],
            }
          : {
              role: i % 2 === 0 ? 'user' : 'assistant',
              content: `${word()} ${word()} ${word()} n${s}x${i}`,
              tokenCount: i * 100,
            },
      ),
    );
    if (s % 6 === 0) await store.setSessionTitle(id, `Title ${s}`);
    if (s % 4 === 1) await store.endSession(id, 'done');
    if (s % 9 === 0) await store.requestHandoff(id, 'telegram');
  }
  // The largest values the integer columns could hold.
  await (store.backend as PgBackend).db.execute(
    sql`UPDATE sessions SET message_count = ${INT32_MAX}, tool_call_count = ${INT32_MAX}, api_call_count = ${INT32_MAX} WHERE id = 'session-3'`,
  );
}

const QUERIES = ['deploy', 'kubectl OR helm', '"rollback latency"', 'terminal', '记忆断裂', 'ingr*'];

const harnesses: Harness[] = [pgliteHarness(), await postgresHarness()];
const tmpDirs: string[] = [];
afterAll(() => {
  for (const d of tmpDirs) fs.rmSync(d, { recursive: true, force: true });
});

for (const h of harnesses) {
  const available = reportAvailability(h);
  describe.skipIf(!available)(
    `migration 0006, bigint session counters [${h.name}]${available ? '' : ` (skipped: ${h.unavailable})`}`,
    () => {
      afterAll(() => h.cleanup());

      it('migrates a populated store from 0005 without changing a row, and counters then pass 2^31', async () => {
        const url = await h.freshUrl();
        const upTo0005 = pgFolderUpTo('0005_message_search_terms');
        tmpDirs.push(upTo0005);
        // Sessions as the old migration wrote them: the activity columns are added (and filled) by 0008/0009.
        const digest = async (store: SessionStore) =>
          (
            await rowsOfStore<{
              sessions: number;
              messages: number;
              sessionRows: string;
              messageRows: string;
              types: string;
            }>(
              store,
              sql`SELECT (SELECT count(*)::int FROM sessions) AS sessions, (SELECT count(*)::int FROM messages) AS messages,
                  (SELECT md5(string_agg((to_jsonb(s) - 'last_message_at' - 'chain_last_active')::text, E'\n' ORDER BY s.id)) FROM sessions s) AS "sessionRows",
                  (SELECT md5(string_agg((to_jsonb(m) - 'search_vector' - 'search_length')::text, E'\n' ORDER BY m.id)) FROM messages m) AS "messageRows",
                  (SELECT string_agg(column_name || ' ' || data_type, ', ' ORDER BY column_name) FROM information_schema.columns
                    WHERE table_name = 'sessions' AND column_name IN ('message_count', 'tool_call_count', 'api_call_count')) AS types`,
            )
          )[0]!;
        const answers = async (store: SessionStore) =>
          Promise.all(
            QUERIES.map(async (q) =>
              (await store.searchMessages(q, { limit: 50 })).map((hit) => [hit.id, hit.snippet]),
            ),
          );

        const old = await openStore(url, { migrationsFolder: upTo0005 });
        let before: Awaited<ReturnType<typeof digest>>;
        let exportedBefore: unknown;
        try {
          expect((await old.migrationStatus()).applied).toEqual(readJournal(upTo0005).entries.map((e) => e.tag));
          await fill(old);
          before = await digest(old);
          exportedBefore = await old.exportAll();
          // The old columns refuse what the new ones take.
          await expect(old.updateTokenCounts('session-3', { apiCallCount: 1 })).rejects.toThrow(/out of range/);
        } finally {
          await old.close();
        }
        expect(before).toMatchObject({
          sessions: 40,
          messages: 1000,
          types: 'api_call_count integer, message_count integer, tool_call_count integer',
        });

        const store = await openStore(url);
        try {
          const status = await store.migrationStatus();
          expect(status.pending).toEqual([]);
          expect(status.applied).toContain('0006_session_counters_bigint');
          expect(await digest(store)).toEqual({
            ...before,
            types: 'api_call_count bigint, message_count bigint, tool_call_count bigint',
          });
          expect(await store.exportAll()).toEqual(exportedBefore);
          // Search answers as on a store created at the latest migration with the same writes (search itself
          // moved to the block index in 0010, so the old store's answers are not the reference).
          const fresh = await openStore(await h.freshUrl());
          let expected: unknown[][];
          try {
            await fill(fresh);
            expected = await answers(fresh);
          } finally {
            await fresh.close();
          }
          expect(await answers(store)).toEqual(expected);
          expect(expected.every((hits) => hits.length > 0)).toBe(true);

          await store.updateTokenCounts('session-3', { apiCallCount: 1 });
          await store.appendMessage('session-3', 'assistant', 'deploy done', {
            toolCalls: [{ id: 'last', type: 'function', function: { name: 'terminal', arguments: '{}' } }],
          });
          expect(await store.getSession('session-3')).toMatchObject({
            messageCount: 2 ** 31,
            toolCallCount: 2 ** 31,
            apiCallCount: 2 ** 31,
          });
          expect((await store.searchMessages('"deploy done"')).map((hit) => hit.sessionId)).toEqual(['session-3']);
        } finally {
          await store.close();
        }
      }, 300_000);
    },
  );
}
