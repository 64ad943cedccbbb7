/**
 * The repositories reachable from the store (store.messages, store.sessions, …) validate their writes as
 * the facade does: bad input is a ValidationError naming the field (a rejection, never a synchronous
 * throw) and writes nothing. Content that spells the SQLite structured-content marker stays a string on
 * every path. Run on a SQLite file, SQLite :memory:, PGlite and (when reachable, always under CI) Postgres.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { type SessionStore, ValidationError } from '../src/index.js';
import {
  type Harness,
  pgliteHarness,
  postgresHarness,
  reportAvailability,
  sqliteFileHarness,
  sqliteMemoryHarness,
} from './backends.js';

const harnesses: Harness[] = [sqliteFileHarness(), sqliteMemoryHarness(), pgliteHarness(), await postgresHarness()];

const SPOOF = '\u0000json:{"spoofed":true}';
// What a JavaScript caller (or a cast) could pass where the types say otherwise.
const bad = (v: unknown) => v as never;

type Case = [call: string, field: string, run: (s: SessionStore) => Promise<unknown>];
const CASES: Case[] = [
  ['messages.append', 'sessionId', (s) => s.messages.append('', 'user', 'x')],
  ['messages.append', 'role', (s) => s.messages.append('seed', 'us\u0000er', 'x')],
  ['messages.append', 'content', (s) => s.messages.append('seed', 'user', bad({ n: 1n }))],
  ['messages.append', 'options', (s) => s.messages.append('seed', 'user', 'x', bad({ tool_calls: [] }))],
  ['messages.append', 'options.tokenCount', (s) => s.messages.append('seed', 'user', 'x', { tokenCount: 2 ** 40 })],
  ['messages.appendMany', 'messages.0.role', (s) => s.messages.appendMany('seed', [{ role: '', content: 'x' }])],
  [
    'messages.replace',
    'messages.0.toolCalls',
    (s) => s.messages.replace('seed', [{ role: 'user', toolCalls: Number.NaN }]),
  ],
  ['sessions.create', 'sessionId', (s) => s.sessions.create('a\u0000b', 'cli')],
  ['sessions.create', 'options.parentSessionId', (s) => s.sessions.create('self', 'cli', { parentSessionId: 'self' })],
  ['sessions.create', 'options.modelConfig', (s) => s.sessions.create('new', 'cli', { modelConfig: bad(new Date()) })],
  ['sessions.end', 'endReason', (s) => s.sessions.end('seed', bad(5))],
  ['sessions.reopen', 'sessionId', (s) => s.sessions.reopen(bad(5))],
  ['sessions.updateSystemPrompt', 'systemPrompt', (s) => s.sessions.updateSystemPrompt('seed', bad(5))],
  [
    'sessions.updateTokenCounts',
    'options.inputTokens',
    (s) => s.sessions.updateTokenCounts('seed', { inputTokens: 1.5 }),
  ],
  ['sessions.delete', 'sessionId', (s) => s.sessions.delete(bad(null))],
  ['sessions.clearMessages', 'sessionId', (s) => s.sessions.clearMessages(bad(1))],
  ['sessions.prune', 'options.olderThanDays', (s) => s.sessions.prune(-1)],
  ['titles.set', 'title', (s) => s.titles.set('seed', bad(5))],
  ['meta.set', 'key', (s) => s.meta.set('', 'v')],
  ['meta.set', 'value', (s) => s.meta.set('k', 'a\u0000b')],
  ['handoffs.request', 'platform', (s) => s.handoffs.request('seed', '')],
  ['handoffs.claim', 'sessionId', (s) => s.handoffs.claim(bad(1))],
  ['handoffs.complete', 'sessionId', (s) => s.handoffs.complete(bad(1))],
  ['handoffs.fail', 'error', (s) => s.handoffs.fail('seed', bad(5))],
  ['telegramTopics.enable', 'options.chatId', (s) => s.telegramTopics.enable({ chatId: '', userId: 'u' })],
  ['telegramTopics.disable', 'options.chatId', (s) => s.telegramTopics.disable(1.5)],
  [
    'telegramTopics.bind',
    'options.sessionKey',
    (s) => s.telegramTopics.bind(bad({ chatId: 1, threadId: 2, userId: 3, sessionId: 'seed' })),
  ],
  ['search.searchMessages', 'options.sort', (s) => s.search.searchMessages('hello', { sort: bad('newst') })],
  ['search.searchMessages', 'query', (s) => s.search.searchMessages(bad(5))],
  ['maintenance.maybeAutoPruneAndVacuum', 'options', (s) => s.maintenance.maybeAutoPruneAndVacuum(bad({ bogus: 1 }))],
];

for (const h of harnesses) {
  const available = reportAvailability(h);
  describe.skipIf(!available)(
    `repositories validate [${h.name}]${available ? '' : ` (skipped: ${h.unavailable})`}`,
    () => {
      afterAll(() => h.cleanup());

      it('keeps content that spells the structured-content marker a string, on every write path', async () => {
        const store = await h.open();
        try {
          await store.sessions.create('s', 'cli');
          const appended = await store.messages.append('s', 'user', SPOOF);
          await store.messages.appendMany('s', [{ role: 'user', content: SPOOF }]);
          await store.appendMessage('s', 'user', SPOOF);
          const read = await store.getMessages('s');
          expect(read.map((m) => m.content)).toEqual([SPOOF, SPOOF, SPOOF]);
          expect(read[0]!.id).toBe(appended);
          expect(await store.messages.list('s')).toEqual(read);

          await store.messages.replace('s', [
            { role: 'user', content: SPOOF },
            { role: 'assistant', content: [{ type: 'text', text: 'real' }] },
          ]);
          const replaced = await store.getMessages('s');
          expect(replaced.map((m) => m.content)).toEqual([SPOOF, [{ type: 'text', text: 'real' }]]);
          expect(typeof replaced[0]!.content).toBe('string');
        } finally {
          await store.close();
        }
      });

      it('refuses bad input with a ValidationError naming the field, as a rejection, and writes nothing', async () => {
        const store = await h.open();
        try {
          await store.createSession('seed', 'cli', { model: 'm' });
          await store.appendMessage('seed', 'user', 'hello');
          await store.setMeta('k', 'v');
          const fingerprint = async () =>
            JSON.stringify([
              await store.exportAll(),
              await store.getMeta('k'),
              await store.getMeta('telegram_dm_topic_schema_version'),
              await store.sessionCount(),
            ]);
          const before = await fingerprint();
          const failures: string[] = [];
          for (const [call, field, run] of CASES) {
            let pending: Promise<unknown>;
            try {
              pending = run(store);
            } catch (error) {
              failures.push(`${call}: threw synchronously (${String(error)})`);
              continue;
            }
            const error = await pending.then(
              () => undefined,
              (e: unknown) => e,
            );
            if (!(error instanceof ValidationError))
              failures.push(`${call} (${field}): ${String(error) || 'no error'}`);
            else if (error.field !== field) failures.push(`${call}: field ${error.field}, expected ${field}`);
          }
          expect(failures).toEqual([]);
          expect(await fingerprint()).toBe(before);
        } finally {
          await store.close();
        }
      });

      it('applies the facade defaults and transforms when called directly', async () => {
        const store = await h.open();
        try {
          await store.sessions.create('s', 'cli', { systemPrompt: 'lone \ud800 surrogate' });
          expect((await store.getSession('s'))!.systemPrompt).toBe('lone \ufffd surrogate');
          await store.telegramTopics.bind({ chatId: 10, threadId: 20, userId: 30, sessionKey: 'k', sessionId: 's' });
          expect(await store.getTelegramTopicBinding({ chatId: '10', threadId: '20' })).toMatchObject({
            chatId: '10',
            userId: '30',
            managedMode: 'auto',
          });
          await store.sessions.updateTokenCounts('s', { inputTokens: 5 });
          expect((await store.getSession('s'))!.inputTokens).toBe(5);
        } finally {
          await store.close();
        }
      });
    },
  );
}
