/**
 * Hostile input through the facade: every string parameter (ids, sources, roles, titles, meta keys and
 * values, tool names, JSON payloads, search queries) gets quotes, comment markers, semicolons, NUL, lone
 * surrogates, LIKE and FTS5 metacharacters, and 1 MB strings. An identifier call either fails with a
 * ValidationError and writes nothing, or stores the value and reads back exactly that value; free text
 * (message fields, system prompts, JSON payloads) is never refused and reads back exactly, lone surrogates
 * as U+FFFD. Nothing reaches SQL as text: the schema is intact afterwards and nothing else changed.
 */
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { type SessionStore, ValidationError, sanitizeTitle } from '../../src/index.js';
import { type ContractHarness, harnessAvailable } from '../../src/testing/index.js';
import { pgliteHarness, postgresHarness, sqliteMemoryHarness, mariadbHarness } from '../backends.js';
import { emptyStore } from '../helpers/store-fixture.js';

const PIECES = [
  "'",
  "''",
  '"',
  '--',
  ';',
  "'); DROP TABLE sessions; --",
  "' OR '1'='1",
  '\\',
  '%',
  '_',
  '*',
  '^',
  '"NEAR"',
  'NOT',
  'OR',
  '\u0000',
  'a\u0000b',
  '\ud800',
  'x\udfff',
  '\u2028',
  '\ufeff',
  '𝔘𝔫𝔦',
  '记忆断裂',
  '$1',
  '?',
  '?1',
  ':name',
  '@p',
  // biome-ignore lint/suspicious/noTemplateCurlyInString: a hostile input that looks like a template
  '${x}',
  '\r\n',
  '\t',
];

const hostile = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 30 }),
  fc.string({ unit: 'grapheme', maxLength: 30 }),
  fc.constantFrom(...PIECES),
  fc.array(fc.constantFrom(...PIECES, 'x', ' ', 'é'), { maxLength: 12 }).map((a) => a.join('')),
);
const hostileJson = fc.oneof(
  fc.dictionary(hostile, hostile, { maxKeys: 4 }),
  fc.array(fc.oneof(hostile, fc.integer(), fc.constant(null)), { maxLength: 4 }),
);

/** The call failed with a ValidationError (true), or succeeded (false); anything else fails the test. */
async function refusedOrDone(call: () => Promise<unknown>): Promise<boolean> {
  try {
    await call();
    return false;
  } catch (error) {
    expect(error).toBeInstanceOf(ValidationError);
    return true;
  }
}

const clean = (s: string) => !s.includes('\u0000') && s.isWellFormed();
/** Free text as it reads back: lone surrogates (which UTF-8 cannot carry) as U+FFFD, everything else exactly. */
const stored = (s: string) => s.toWellFormed();
const storedJson = (v: unknown): unknown =>
  typeof v === 'string'
    ? stored(v)
    : Array.isArray(v)
      ? v.map(storedJson)
      : v !== null && typeof v === 'object'
        ? Object.fromEntries(Object.entries(v).map(([k, x]) => [stored(k), storedJson(x)]))
        : v;

async function fingerprint(store: SessionStore) {
  return { sessions: await store.sessionCount(), messages: await store.messageCount() };
}

/**
 * Skip list: PGlite 0.5 decodes every text field with `new TextDecoder('utf-8')`, which drops a leading
 * U+FEFF (a byte-order mark) from the value read back. A PGlite bug, not ours (the same values round-trip
 * on the Postgres server and on SQLite); documented in docs/concurrency-and-reliability.md. On PGlite those strings are left out.
 */
const readsBackLeadingBom = (h: ContractHarness) => h.name !== 'pglite';

const RUNS: Record<string, number> = { 'sqlite-memory': 150, pglite: 40, postgres: 80, mariadb: 80 };
const MB = 'x'.repeat(1024 * 1024);

const harnesses: ContractHarness[] = [
  sqliteMemoryHarness(),
  pgliteHarness(),
  await postgresHarness(),
  await mariadbHarness(),
];
for (const h of harnesses) {
  const available = harnessAvailable(h);
  // A harness may lack search (a backend under construction): its skip says why, and the search checks wait.
  const searchSkip = h.skips?.search;
  describe.skipIf(!available)(`hostile input [${h.name}]${available ? '' : ` (skipped: ${h.unavailable})`}`, () => {
    let store: SessionStore;
    afterAll(async () => {
      await store?.close();
      await h.cleanup();
    });

    it('sessions, titles, messages and meta: refused with ValidationError and nothing written, or read back exactly', async () => {
      store = await h.open();
      let n = 0;
      await fc.assert(
        fc.asyncProperty(
          hostile,
          hostile,
          hostile,
          hostile,
          hostileJson,
          hostile,
          hostile,
          async (id, source, model, title, config, role, content) => {
            const bomLed = (v: unknown): boolean =>
              typeof v === 'string'
                ? v.startsWith('\ufeff')
                : v !== null && typeof v === 'object'
                  ? Object.entries(v).some(([k, x]) => bomLed(k) || bomLed(x))
                  : false;
            fc.pre(readsBackLeadingBom(h) || ![id, source, model, title, config, role, content].some(bomLed));
            await emptyStore(store);
            const sid = `${id}-${n++}`;
            const before = await fingerprint(store);
            // Ids and sources are keys: non-empty, at most 1,024 characters.
            const key = (k: string) => clean(k) && k.length >= 1 && k.length <= 1024;
            // Free text (the system prompt, model_config) is never the reason for a refusal.
            const valid = key(sid) && key(source) && clean(model);
            const refused = await refusedOrDone(() =>
              store.createSession(sid, source, { model, modelConfig: config, systemPrompt: content }),
            );
            // Refused exactly when some input is invalid; a refusal writes nothing.
            expect(refused).toBe(!valid);
            if (refused) {
              expect(await fingerprint(store)).toEqual(before);
              return;
            }
            const row = (await store.getSession(sid))!;
            expect(row).toMatchObject({ id: sid, source, model, systemPrompt: stored(content) });
            // As in Hermes, a falsy model_config ({} or []) is stored as NULL.
            expect(row.modelConfig).toEqual(Object.keys(config).length > 0 ? storedJson(config) : null);

            if (!(await refusedOrDone(() => store.setSessionTitle(sid, title)))) {
              expect(await store.getSessionTitle(sid)).toBe(sanitizeTitle(title));
            } else {
              expect(await store.getSessionTitle(sid)).toBeNull();
            }

            const toolCalls = [{ id: content, function: { name: role, arguments: JSON.stringify(config) } }];
            // Only the role (an identifier) can be refused; the message's text is always stored.
            const appended = !(await refusedOrDone(() =>
              store.appendMessage(sid, role, content, { toolName: source, toolCalls }),
            ));
            expect(appended).toBe(clean(role) && role.length >= 1 && role.length <= 1024);
            if (appended) {
              const [m] = await store.getMessages(sid);
              expect(m).toMatchObject({
                role,
                content: stored(content),
                toolName: stored(source),
                toolCalls: storedJson(toolCalls),
              });
              // A search for the stored text never errors and never changes anything.
              if (searchSkip === undefined) {
                const counts = await fingerprint(store);
                expect(Array.isArray(await store.searchMessages(content))).toBe(true);
                expect(
                  Array.isArray(await store.searchMessages(title, { roleFilter: [role], sourceFilter: [source] })),
                ).toBe(true);
                expect(await fingerprint(store)).toEqual(counts);
              }
            } else {
              expect(await store.messageCount()).toBe(0);
            }

            if (!(await refusedOrDone(() => store.setMeta(model || 'k', content))))
              expect(await store.getMeta(model || 'k')).toBe(content);
          },
        ),
        { numRuns: RUNS[h.name] ?? 40 },
      );
      // The schema is intact: every table still answers.
      expect(await store.sessionCount()).toBeGreaterThanOrEqual(0);
      expect(await store.listSessionsRich({ limit: 1 })).toBeDefined();
    }, 300_000);

    it('lookups, handoffs, end reasons and Telegram ids: refused exactly when invalid, else stored and read back exactly', async () => {
      await fc.assert(
        fc.asyncProperty(hostile, hostile, hostile, hostile, hostile, async (a, b, c, d, e) => {
          fc.pre(readsBackLeadingBom(h) || ![a, b, c, d, e].some((x) => x.startsWith('\ufeff')));
          await emptyStore(store);
          const key = (k: string) => clean(k) && k.length >= 1 && k.length <= 1024;
          await store.createSession('known-1', 'cli');
          await store.createSession('known-2', 'cli');
          // Lookups never match by accident: LIKE metacharacters in a prefix are literal.
          const resolved = await store.resolveSessionId(a).catch((error: unknown) => {
            expect(error).toBeInstanceOf(ValidationError);
            return 'refused';
          });
          if (resolved === 'refused') expect(clean(a) && a.length <= 1024).toBe(false);
          else
            expect(resolved).toBe(
              a !== '' && 'known-1'.startsWith(a) && !'known-2'.startsWith(a)
                ? 'known-1'
                : a === 'known-1' || a === 'known-2'
                  ? a
                  : null,
            );
          const byTitle = await store.getSessionByTitle(b).catch((error: unknown) => {
            expect(error).toBeInstanceOf(ValidationError);
            return 'refused';
          });
          expect(byTitle === 'refused' ? clean(b) : byTitle).toBe(byTitle === 'refused' ? false : null);

          if (!(await refusedOrDone(() => store.endSession('known-1', c))))
            expect((await store.getSession('known-1'))!.endReason).toBe(c);
          else expect(clean(c)).toBe(false);
          if (!(await refusedOrDone(() => store.requestHandoff('known-2', d)))) {
            expect(key(d)).toBe(true);
            expect(await store.getHandoffState('known-2')).toEqual({ state: 'pending', platform: d, error: null });
            await store.claimHandoff('known-2');
            if (!(await refusedOrDone(() => store.failHandoff('known-2', e)))) {
              expect(await store.getHandoffState('known-2')).toEqual({ state: 'failed', platform: d, error: e });
            } else expect(clean(e)).toBe(false);
          } else expect(key(d)).toBe(false);

          const topicValid = [a, b, c].every(key) && key(e);
          const bound = await refusedOrDone(async () => {
            await store.enableTelegramTopicMode({ chatId: a, userId: b });
            await store.bindTelegramTopic({ chatId: a, threadId: c, userId: b, sessionKey: e, sessionId: 'known-1' });
          });
          expect(bound).toBe(!topicValid);
          if (!bound) {
            expect(await store.isTelegramTopicModeEnabled({ chatId: a, userId: b })).toBe(true);
            expect(await store.getTelegramTopicBinding({ chatId: a, threadId: c })).toMatchObject({
              chatId: a,
              threadId: c,
              userId: b,
              sessionKey: e,
              sessionId: 'known-1',
            });
          }
          expect(await store.sessionCount()).toBe(2);
        }),
        { numRuns: RUNS[h.name] ?? 40 },
      );
    }, 300_000);

    it.skipIf(searchSkip !== undefined)(
      `search queries of any shape return a list (or a ValidationError for a non-string), never a database error${searchSkip ? ` (skipped: ${searchSkip})` : ''}`,
      async () => {
        await emptyStore(store);
        await store.createSession('s', 'cli');
        await store.appendMessage(
          's',
          'user',
          'it\'s a "quoted" -- comment; DROP TABLE sessions; 100% done_ok 记忆断裂',
        );
        await fc.assert(
          fc.asyncProperty(hostile, async (query) => {
            const hits = await store.searchMessages(query, { limit: 5 });
            expect(Array.isArray(hits)).toBe(true);
          }),
          { numRuns: (RUNS[h.name] ?? 40) * 2 },
        );
        expect(await store.messageCount()).toBe(1);
      },
      300_000,
    );

    if (h.name === 'pglite') {
      it('PGlite still drops a leading U+FEFF (when this fails, PGlite is fixed: remove the skip above)', async () => {
        await emptyStore(store);
        await store.createSession('bom', 'cli', { model: '\ufeffm' });
        expect((await store.getSession('bom'))!.model).toBe('m');
      });
    }

    it('stores and reads back 1 MB strings exactly (content, system prompt, meta, JSON)', async () => {
      await emptyStore(store);
      const big = `${MB}'; DROP TABLE messages; --`;
      await store.createSession('big', 'cli', { systemPrompt: big, modelConfig: { prompt: big } });
      const id = await store.appendMessage('big', 'user', big, { toolCalls: [{ args: big }] });
      await store.setMeta('big', big);
      const [m] = await store.getMessages('big');
      expect(m!.id).toBe(id);
      expect(m!.content === big && (m!.toolCalls as Array<{ args: string }>)[0]!.args === big).toBe(true);
      const s = (await store.getSession('big'))!;
      expect(s.systemPrompt === big && (s.modelConfig as { prompt: string }).prompt === big).toBe(true);
      expect((await store.getMeta('big')) === big).toBe(true);
      if (searchSkip === undefined)
        expect((await store.searchMessages('DROP', { limit: 1 })).map((x) => x.id)).toEqual([id]);
    }, 120_000);
  });
}
