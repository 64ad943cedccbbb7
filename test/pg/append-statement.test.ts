/**
 * Postgres appendMessage sends one prepared statement (sql/pg-append.ts) instead of the generic operation
 * (sql/messages.ts appendMessageOp: UPDATE, then INSERT, in a transaction). Both must write the same row and
 * move the same counters: checked here column by column (every column, the generated search columns and the
 * postings the triggers maintain included) for plain and structured content, NUL and U+FFFF, reasoning
 * fields and tool calls, on PGlite and the server, in the default layout and in a schema of its own.
 */
import { sql } from 'drizzle-orm';
import { afterAll, describe, expect, it } from 'vitest';
import { type PgBackend, SessionNotFoundError, type SessionStore } from '../../src/index.js';
import type { AppendedMessage } from '../../src/db/dialect.js';
import { PgDialect } from '../../src/db/pg/dialect.js';
import { rowsOf } from '../../src/db/pg/open.js';
import { appendMessageOp } from '../../src/sql/messages.js';
import { type Harness, pgliteHarness, postgresHarness, reportAvailability } from '../backends.js';

const harnesses: Harness[] = [
  pgliteHarness(),
  pgliteHarness('hermes_pglite'),
  await postgresHarness(),
  await postgresHarness('hermes_pg'),
];
afterAll(async () => {
  for (const h of harnesses) await h.cleanup();
});

const T0 = 1_750_000_000.123456;
const TOOL_CALLS = [
  { id: 'call_1', type: 'function', function: { name: 'terminal', arguments: '{"command": "ls"}' } },
  { id: 'call_2', type: 'function', function: { name: 'read_file', arguments: '{"path": "a\u0000b"}' } },
];

/** Every shape a message can take: each is appended once by each path. */
const MESSAGES: Array<Omit<AppendedMessage, 'sessionId' | 'timestamp' | 'toolCallCount'>> = [
  { role: 'user', content: 'deploy the service with docker compose and check the nginx logs' },
  { role: 'user', content: null },
  { role: 'user', content: '' },
  { role: 'user', content: 'a NUL \u0000 here, U+FFFF \uffff there, \uffff\u0000 both, and 日本語のテキスト' },
  { role: 'user', content: '\u0000json:{"looks": "structured", "but": "is a string"}' },
  {
    role: 'user',
    content: [
      { type: 'text', text: 'what is in this picture? \u0000' },
      { type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA' } },
    ],
  },
  { role: 'user', content: { type: 'text', text: 'an object', nested: { list: [1, 2.5, null, true] } } },
  {
    role: 'assistant',
    content: 'calling tools',
    toolCalls: TOOL_CALLS,
    finishReason: 'tool_calls',
    tokenCount: 123,
    reasoning: 'think \u0000 first',
    reasoningContent: 'the content of the reasoning',
    reasoningDetails: [{ type: 'reasoning.text', text: 'step \u0000 one' }],
    codexReasoningItems: [{ id: 'rs_1', encrypted_content: 'xyz' }],
    codexMessageItems: { id: 'msg_1', status: 'completed' },
  },
  { role: 'assistant', content: 'one call, not a list', toolCalls: { id: 'call_3', type: 'function' } },
  {
    role: 'assistant',
    content: 'empty payloads store NULL',
    toolCalls: [],
    reasoningDetails: {},
    codexReasoningItems: [],
    codexMessageItems: '',
    reasoning: '',
  },
  { role: 'tool', content: 'total 0\n', toolCallId: 'call_1', toolName: 'terminal\u0000x' },
];
const toolCallCount = (v: unknown) => (v === null || v === undefined ? 0 : Array.isArray(v) ? v.length : 1);

async function rowsIn(store: SessionStore, query: ReturnType<typeof sql>) {
  return rowsOf<Record<string, unknown>>(await (store.backend as PgBackend).db.execute(query));
}

for (const h of harnesses) {
  describe.skipIf(!reportAvailability(h))(`[${h.name}] the one-statement append`, () => {
    it('writes the same row, postings and counters as the generic operation, column by column', async () => {
      const store = await h.open();
      try {
        const backend = store.backend as PgBackend;
        const d = new PgDialect(backend, backend.names);
        const t = backend.names;
        await store.createSession('fast', 'cli');
        await store.createSession('generic', 'cli');
        for (const [i, m] of MESSAGES.entries()) {
          const timestamp = T0 + i;
          const count = toolCallCount(m.toolCalls);
          await d.appendMessage({ ...m, sessionId: 'fast', timestamp, toolCallCount: count });
          await d.write(appendMessageOp(d, { ...m, sessionId: 'generic', timestamp, toolCallCount: count }), {
            lane: 'generic',
          });
        }
        // Every column but the id and the session, as Postgres prints it (jsonb and tsvector as text).
        const stored = (session: string) =>
          rowsIn(
            store,
            sql`SELECT (to_jsonb(m) - 'id' - 'session_id') AS row FROM ${t.messages} m WHERE session_id = ${session} ORDER BY id`,
          );
        const fast = await stored('fast');
        const generic = await stored('generic');
        expect(fast.length).toBe(MESSAGES.length);
        for (const [i, row] of fast.entries()) expect(row.row, `message ${i}`).toEqual(generic[i]!.row);
        // Sanity: the comparison sees real values (NUL escaped, structured content in content_json).
        expect((fast[3]!.row as Record<string, unknown>).content).toContain('\uffff\ufffe');
        expect((fast[5]!.row as Record<string, unknown>).content_json).not.toBeNull();

        const postings = (session: string) =>
          rowsIn(
            store,
            sql`SELECT t.term, t.doc_length, t.positions::text AS positions, dense_rank() OVER (ORDER BY m.id) AS nth
              FROM ${t.messageSearchTerms} t JOIN ${t.messages} m ON m.id = t.message_id
              WHERE m.session_id = ${session} ORDER BY nth, t.term`,
          );
        const fastPostings = await postings('fast');
        expect(fastPostings.length).toBeGreaterThan(20);
        expect(fastPostings).toEqual(await postings('generic'));

        const [fastSession, genericSession] = await Promise.all([
          store.getSession('fast'),
          store.getSession('generic'),
        ]);
        expect(fastSession!.messageCount).toBe(MESSAGES.length);
        expect(fastSession!.toolCallCount).toBe(3);
        // The same session otherwise (created a moment apart).
        expect({ ...fastSession, id: 'generic', startedAt: 0 }).toEqual({ ...genericSession, startedAt: 0 });
        // And read back through the API, both are what was appended.
        const read = await store.getMessages('fast');
        expect(read.map((m) => m.content)).toEqual((await store.getMessages('generic')).map((m) => m.content));
        expect(read[3]!.content).toBe(MESSAGES[3]!.content);
        expect(read[5]!.content).toEqual(MESSAGES[5]!.content);
      } finally {
        await store.close();
      }
    });

    it('writes nothing for an unknown session: no row, no postings, no statistics', async () => {
      const store = await h.open();
      try {
        const t = (store.backend as PgBackend).names;
        await store.createSession('s', 'cli');
        await store.appendMessage('s', 'user', 'one message');
        const totals = () =>
          rowsIn(
            store,
            sql`SELECT (SELECT count(*) FROM ${t.messages})::int AS messages,
              (SELECT count(*) FROM ${t.messageSearchTerms})::int AS postings,
              (SELECT COALESCE(sum(docs), 0)::int FROM ${t.messageSearchStats}) AS docs,
              (SELECT COALESCE(sum(tokens), 0)::int FROM ${t.messageSearchStats}) AS tokens`,
          );
        const before = await totals();
        await expect(store.appendMessage('nope', 'user', 'lost words')).rejects.toBeInstanceOf(SessionNotFoundError);
        expect(await totals()).toEqual(before);
        expect((await store.getSession('s'))!.messageCount).toBe(1);
      } finally {
        await store.close();
      }
    });

    it('commits one session’s appends in request order, none awaited, beside other sessions’', async () => {
      const store = await h.open({ poolSize: 4 });
      try {
        for (const s of ['a', 'b', 'c']) await store.createSession(s, 'cli');
        const calls = Array.from({ length: 90 }, (_, i) =>
          store.appendMessage('abc'[i % 3]!, 'user', `message ${Math.floor(i / 3)}`),
        );
        const ids = await Promise.all(calls);
        for (const s of ['a', 'b', 'c']) {
          const messages = await store.getMessages(s);
          expect(messages.map((m) => m.content)).toEqual(Array.from({ length: 30 }, (_, i) => `message ${i}`));
          // Ids in the order the calls were made, as each call returned them.
          const mine = ids.filter((_, i) => 'abc'[i % 3] === s);
          expect(messages.map((m) => m.id)).toEqual(mine);
          expect([...mine].sort((x, y) => x - y)).toEqual(mine);
          expect((await store.getSession(s))!.messageCount).toBe(30);
        }
      } finally {
        await store.close();
      }
    });
  });
}
