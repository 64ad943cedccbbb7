/**
 * Postgres appendMessage sends one prepared statement (db/pg/append-statement.ts) instead of the generic operation
 * (sql/messages.ts appendMessageOp: UPDATE, then INSERT, in a transaction). Both must write the same row and
 * move the same counters: checked here column by column (every column, the generated search columns and the
 * the search queue the triggers fill included) for plain and structured content, NUL and U+FFFF, reasoning
 * fields and tool calls, on PGlite and the server, in the default layout and in a schema of its own. Appends
 * that queue up go together in one statement of many rows (db/pg/append-queue.ts): the same check holds for
 * it, and a batch with a failing append fails that one alone.
 */
import { sql } from 'drizzle-orm';
import { afterAll, describe, expect, it } from 'vitest';
import postgres from 'postgres';
import {
  type PgBackend,
  SessionNotFoundError,
  type SessionStore,
  openStore,
  postgresSessionSettings,
} from '../../src/index.js';
import type { AppendedMessage } from '../../src/db/dialect.js';
import { PgRunner } from '../../src/db/pg/runner.js';
import { PgSpelling } from '../../src/db/pg/spelling.js';
import { rowsOf } from '../../src/db/pg/open.js';
import { appendMessageOp } from '../../src/sql/messages.js';
import { pgAppendStatements } from '../../src/db/pg/append-statement.js';
import { AppendQueue } from '../../src/db/pg/append-queue.js';
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
    it('writes the same row, search queue and counters as the generic operation, column by column', async () => {
      const store = await h.open();
      try {
        const backend = store.backend as PgBackend;
        const d = new PgSpelling(backend.names);
        const run = new PgRunner(backend, d);
        const t = backend.names;
        await store.createSession('fast', 'cli');
        await store.createSession('generic', 'cli');
        for (const [i, m] of MESSAGES.entries()) {
          const timestamp = T0 + i;
          const count = toolCallCount(m.toolCalls);
          await run.appendMessage({ ...m, sessionId: 'fast', timestamp, toolCallCount: count });
          await run.write(appendMessageOp(d, { ...m, sessionId: 'generic', timestamp, toolCallCount: count }), {
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

        // Each message waits in the search queue (migration 0010), untokenized until a search.
        const queued = (session: string) =>
          rowsIn(
            store,
            sql`SELECT count(*)::int AS n, count(r.words)::int AS tokenized
              FROM ${t.messageSearchRecent} r JOIN ${t.messages} m ON m.id = r.message_id WHERE m.session_id = ${session}`,
          );
        expect(await queued('fast')).toEqual([{ n: MESSAGES.length, tokenized: 0 }]);
        expect(await queued('generic')).toEqual(await queued('fast'));

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

    it('writes the same rows in one statement of many rows (group commit) as the generic operation', async () => {
      const store = await h.open();
      try {
        const backend = store.backend as PgBackend;
        const d = new PgSpelling(backend.names);
        const run = new PgRunner(backend, d);
        const t = backend.names;
        const statements = pgAppendStatements(t);
        const batch: unknown[][] = [];
        for (const [i, m] of MESSAGES.entries()) {
          await store.createSession(`many-${i}`, 'cli');
          await store.createSession(`generic-${i}`, 'cli');
          const appended = { ...m, timestamp: T0 + i, toolCallCount: toolCallCount(m.toolCalls) };
          batch.push(statements.params({ ...appended, sessionId: `many-${i}` }));
          await run.write(appendMessageOp(d, { ...appended, sessionId: `generic-${i}` }));
        }
        batch.splice(4, 0, statements.params({ ...MESSAGES[0]!, sessionId: 'nope', timestamp: T0, toolCallCount: 0 }));
        const returned = await backend.statement(statements.many, [JSON.stringify(batch)]);
        // One row per existing session, ids in the batch's order.
        expect(returned.map((r) => r.session_id)).toEqual(MESSAGES.map((_, i) => `many-${i}`));
        const ids = returned.map((r) => Number(r.id));
        expect([...ids].sort((a, b) => a - b)).toEqual(ids);
        const stored = (prefix: string) =>
          rowsIn(
            store,
            sql`SELECT (to_jsonb(m) - 'id' - 'session_id') AS row, s.message_count, s.tool_call_count,
                (SELECT count(*)::int FROM ${t.messageSearchRecent} r WHERE r.message_id = m.id) AS queued
              FROM ${t.messages} m JOIN ${t.sessions} s ON s.id = m.session_id
              WHERE m.session_id LIKE ${`${prefix}-%`} ORDER BY substr(m.session_id, ${prefix.length + 2})::int`,
          );
        const many = await stored('many');
        expect(many.length).toBe(MESSAGES.length);
        expect(many).toEqual(await stored('generic'));
        expect(many.reduce((n, r) => n + Number(r.tool_call_count), 0)).toBe(3);
      } finally {
        await store.close();
      }
    });

    it('sends queued appends together, and a failing one fails alone', async () => {
      const store = await h.open();
      try {
        const backend = store.backend as PgBackend;
        const sent: number[] = [];
        // The real database; the runner only records how many messages each statement carried.
        const counting = {
          statement: (text: string, params: readonly unknown[]) => {
            sent.push(params.length === 1 ? (JSON.parse(params[0] as string) as unknown[]).length : 1);
            return backend.statement(text, params);
          },
        };
        const statements = pgAppendStatements(backend.names);
        const queue = new AppendQueue(counting, statements, 1);
        for (let i = 0; i < 16; i++) await store.createSession(`chat-${i}`, 'telegram');
        const message = (i: number) =>
          statements.params({
            sessionId: `chat-${i}`,
            role: 'user',
            content: `message ${i}`,
            timestamp: T0 + i,
            toolCallCount: 0,
            // Not an integer: Postgres refuses it for token_count, in a batch and alone.
            tokenCount: i === 7 ? 1.5 : i,
          });
        const outcomes = await Promise.allSettled(Array.from({ length: 16 }, (_, i) => queue.append(message(i))));
        // The first went alone at once; the other fifteen waited and went as one statement, which failed
        // (atomic: nothing written), so each went again alone.
        expect(sent).toEqual([1, 15, ...Array(15).fill(1)]);
        expect(outcomes.map((o) => o.status)).toEqual(
          Array.from({ length: 16 }, (_, i) => (i === 7 ? 'rejected' : 'fulfilled')),
        );
        for (let i = 0; i < 16; i++) {
          const messages = await store.getMessages(`chat-${i}`);
          expect(messages.map((m) => m.content)).toEqual(i === 7 ? [] : [`message ${i}`]);
          expect((await store.getSession(`chat-${i}`))!.messageCount).toBe(i === 7 ? 0 : 1);
        }
        // Without a failing one, fifteen queued appends are one statement.
        sent.length = 0;
        await Promise.all(
          Array.from({ length: 16 }, (_, i) =>
            queue.append(message(i === 7 ? 8 : i).map((p, k) => (k === 1 ? `chat-${i}` : p))),
          ),
        );
        expect(sent).toEqual([1, 15]);
        expect((await store.getSession('chat-7'))!.messageCount).toBe(1);
      } finally {
        await store.close();
      }
    });

    it('writes nothing for an unknown session: no row, nothing queued, no index totals', async () => {
      const store = await h.open();
      try {
        const t = (store.backend as PgBackend).names;
        await store.createSession('s', 'cli');
        await store.appendMessage('s', 'user', 'one message');
        const totals = () =>
          rowsIn(
            store,
            sql`SELECT (SELECT count(*) FROM ${t.messages})::int AS messages,
              (SELECT count(*) FROM ${t.messageSearchRecent})::int AS queued,
              (SELECT sum(messages)::int FROM ${t.messageSearchMerged}) AS docs,
              (SELECT sum(tokens)::int FROM ${t.messageSearchMerged}) AS tokens`,
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

const server = await postgresHarness();
afterAll(() => server.cleanup());

describe.skipIf(!reportAvailability(server))('[postgres] an app’s client that defaults to serializable', () => {
  it('appends at read committed all the same: a concurrent update of the session makes it wait, not fail', async () => {
    const url = await server.freshUrl();
    const app = postgres(url, {
      max: 4,
      onnotice: () => {},
      connection: { ...postgresSessionSettings, default_transaction_isolation: 'serializable' },
    });
    const other = postgres(url, { max: 1, onnotice: () => {} });
    const store = await openStore(app);
    try {
      await store.createSession('s', 'cli');
      await store.appendMessage('s', 'user', 'first');
      let appended: Promise<number> | undefined;
      await other.begin(async (tx) => {
        // Another writer updates the session row and holds it; the append waits for it to commit. Alone
        // under serializable, the append's UPDATE would then fail (could not serialize access).
        await tx`UPDATE sessions SET title = 'renamed' WHERE id = 's'`;
        appended = store.appendMessage('s', 'user', 'second');
        for (let i = 0; i < 200; i++) {
          const [{ waiting }] = (await tx`SELECT count(*)::int AS waiting FROM pg_stat_activity
            WHERE datname = current_database() AND wait_event_type = 'Lock'`) as unknown as [{ waiting: number }];
          if (waiting > 0) break;
          await new Promise((r) => setTimeout(r, 25));
        }
      });
      await appended;
      expect((await store.getMessages('s')).map((m) => m.content)).toEqual(['first', 'second']);
      const session = (await store.getSession('s'))!;
      expect(session.messageCount).toBe(2);
      expect(session.title).toBe('renamed');
    } finally {
      await store.close();
      await other.end();
      await app.end();
    }
  });
});
