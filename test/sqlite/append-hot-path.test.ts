/**
 * SQLite appendMessage runs prepared statements with bare parameters (src/db/sqlite/append.ts) instead of
 * the generic operation (appendMessageOp). It must write exactly the row the generic operation writes:
 * every column, the session counters and both FTS indexes, for every kind of message.
 */
import { afterAll, describe, expect, it } from 'vitest';
import type { Database } from 'better-sqlite3';
import { SessionNotFoundError, type SqliteBackend } from '../../src/index.js';
import type { AppendedMessage } from '../../src/db/dialect.js';
import { SqliteRunner } from '../../src/db/sqlite/runner.js';
import { SqliteSpelling } from '../../src/db/sqlite/spelling.js';
import { appendMessageQueries, appendParams } from '../../src/db/sqlite/append.js';
import { compileWithDrizzle } from '../../src/db/sqlite/compile.js';
import { appendMessageOp } from '../../src/sql/messages.js';
import { sqliteFileHarness } from '../backends.js';

const h = sqliteFileHarness();
afterAll(() => h.cleanup());

const toolCalls = [{ id: 'call_1', type: 'function', function: { name: 'terminal', arguments: '{"command": "ls"}' } }];
const messages: Array<Omit<AppendedMessage, 'sessionId' | 'timestamp'>> = [
  { role: 'user', content: 'plain text, ünïcode, 漢字 and a NUL \u0000 inside', toolCallCount: 0 },
  { role: 'user', content: null, toolCallCount: 0 },
  { role: 'user', content: undefined, toolCallCount: 0 },
  { role: 'user', content: '', toolCallCount: 0 },
  // Text that looks like the structured marker is stored in structured form, as the generic path does.
  { role: 'user', content: '\u0000json:["not really"]', toolCallCount: 0 },
  {
    role: 'user',
    content: [
      { type: 'text', text: 'look at this' },
      { type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA' } },
    ],
    toolCallCount: 0,
  },
  {
    role: 'assistant',
    content: 'calling a tool',
    toolCalls,
    toolCallCount: 1,
    tokenCount: 42,
    finishReason: 'tool_calls',
    reasoning: 'I should list the files',
    reasoningContent: 'thinking…',
    reasoningDetails: [{ type: 'reasoning.text', text: 'step 1', signature: null }],
    codexReasoningItems: [{ id: 'rs_1', encrypted_content: 'xyz' }],
    codexMessageItems: { items: [1, 2.5, 'three', true, null] },
  },
  { role: 'tool', content: 'file_a\nfile_b', toolName: 'terminal', toolCallId: 'call_1', toolCallCount: 0 },
  // Falsy JSON payloads are stored as NULL.
  { role: 'assistant', content: 'x', toolCalls: [], reasoningDetails: {}, codexReasoningItems: [], toolCallCount: 0 },
  {
    role: 'assistant',
    content: 'big ints and floats',
    tokenCount: 2 ** 40,
    toolCallCount: 3,
    codexMessageItems: [1e21, -0.5],
  },
];

type Row = Record<string, unknown>;
const rowsOf = (client: Database, session: string) =>
  client.prepare('SELECT * FROM messages WHERE session_id = ? ORDER BY id').all(session) as Row[];
const ftsOf = (client: Database, table: string, ids: unknown[]) =>
  ids.map((id) => (client.prepare(`SELECT content FROM ${table} WHERE rowid = ?`).get(id) as Row | undefined)?.content);

describe('SQLite appendMessage hot path', () => {
  it('binds exactly the parameters, in the statement text, that appendMessageOp compiles to with Drizzle', async () => {
    const store = await h.open();
    try {
      const spelling = new SqliteSpelling();
      for (const m of messages) {
        const message = { ...m, sessionId: 's', timestamp: 1_700_000_000.123456 };
        const generic = appendMessageQueries(spelling, message);
        const hot = appendParams(message);
        expect(compileWithDrizzle(generic.bump).params).toEqual([hot.toolCallCount, hot.sessionId]);
        expect(compileWithDrizzle(generic.insert).params).toEqual(hot.row);
      }
    } finally {
      await store.close();
    }
  });

  it('writes the same rows, counters and FTS entries as the generic operation', async () => {
    const store = await h.open();
    try {
      const client = (store.backend as SqliteBackend).client;
      const spelling = new SqliteSpelling();
      const runner = new SqliteRunner(client, 1000, spelling);
      await store.createSession('hot', 'cli');
      await store.createSession('generic', 'cli');
      const hotIds: number[] = [];
      const genericIds: number[] = [];
      for (const [i, m] of messages.entries()) {
        const timestamp = 1_700_000_000 + i / 7;
        hotIds.push(await runner.appendMessage({ ...m, sessionId: 'hot', timestamp }));
        genericIds.push(await runner.write(appendMessageOp(spelling, { ...m, sessionId: 'generic', timestamp })));
      }
      // Concurrent calls share a transaction on the hot path too.
      const together = await Promise.all(
        messages.map((m, i) => runner.appendMessage({ ...m, sessionId: 'hot', timestamp: 1_800_000_000 + i })),
      );
      for (const [i, m] of messages.entries()) {
        genericIds.push(
          await runner.write(appendMessageOp(spelling, { ...m, sessionId: 'generic', timestamp: 1_800_000_000 + i })),
        );
      }
      hotIds.push(...together);

      const strip = (r: Row) => ({ ...r, id: undefined, session_id: undefined });
      const hotRows = rowsOf(client, 'hot');
      const genericRows = rowsOf(client, 'generic');
      expect(hotRows.map((r) => r.id)).toEqual(hotIds);
      expect(genericRows.map((r) => r.id)).toEqual(genericIds);
      expect(hotRows.map(strip)).toEqual(genericRows.map(strip));
      expect(hotRows.length).toBe(2 * messages.length);
      // Spot-check that the comparison sees real values, not NULLs everywhere.
      const full = hotRows[6]!;
      expect(full.tool_calls).toBe(
        '[{"id": "call_1", "type": "function", "function": {"name": "terminal", "arguments": "{\\"command\\": \\"ls\\"}"}}]',
      );
      expect(full.token_count).toBe(42);
      expect(full.reasoning_content).toBe('thinking…');
      expect(String(hotRows[5]!.content).startsWith('\u0000json:')).toBe(true);
      expect(ftsOf(client, 'messages_fts', hotIds)).toEqual(ftsOf(client, 'messages_fts', genericIds));
      expect(ftsOf(client, 'messages_fts_trigram', hotIds)).toEqual(ftsOf(client, 'messages_fts_trigram', genericIds));

      const counters = (id: string) =>
        client.prepare('SELECT message_count, tool_call_count FROM sessions WHERE id = ?').get(id);
      expect(counters('hot')).toEqual(counters('generic'));
      expect(counters('hot')).toEqual({ message_count: 2 * messages.length, tool_call_count: 8 });

      // What the store reads back is the same too.
      const read = async (id: string) =>
        (await store.getMessages(id)).map((m) => ({ ...m, id: undefined, sessionId: undefined }));
      expect(await read('hot')).toEqual(await read('generic'));
    } finally {
      await store.close();
    }
  });

  it('rejects an unknown session and writes nothing, alone and inside a shared transaction', async () => {
    const store = await h.open();
    try {
      const client = (store.backend as SqliteBackend).client;
      await store.createSession('a', 'cli');
      await expect(store.appendMessage('missing', 'user', 'x')).rejects.toBeInstanceOf(SessionNotFoundError);
      const settled = await Promise.allSettled([
        store.appendMessage('a', 'user', 'one'),
        store.appendMessage('missing', 'user', 'two'),
        store.appendMessage('a', 'user', 'three'),
      ]);
      expect(settled.map((s) => s.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
      expect((settled[1] as PromiseRejectedResult).reason).toBeInstanceOf(SessionNotFoundError);
      expect(rowsOf(client, 'a').map((r) => r.content)).toEqual(['one', 'three']);
      expect(client.prepare('SELECT count(*) AS n FROM messages').get()).toEqual({ n: 2 });
      expect((await store.getSession('a'))!.messageCount).toBe(2);
    } finally {
      await store.close();
    }
  });
});
