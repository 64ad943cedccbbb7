/**
 * An app reads our tables through its own Drizzle instance (its own connection, our exported tables) and
 * the exported row decoders give exactly what the store's reads give: structured content, parsed JSON
 * fields, times, NUL in free text, and content that only spells the structured-content marker.
 */
import { PGlite } from '@electric-sql/pglite';
import Database from 'better-sqlite3';
import { asc, eq } from 'drizzle-orm';
import { drizzle as drizzleSqlite } from 'drizzle-orm/better-sqlite3';
import { drizzle as drizzlePglite } from 'drizzle-orm/pglite';
import { drizzle as drizzlePostgres } from 'drizzle-orm/postgres-js';
import postgres from 'postgres';
import { afterAll, describe, expect, it } from 'vitest';
import {
  type MessageRow,
  type SessionRow,
  type SessionStore,
  type TelegramTopicBinding,
  decodePgMessageRow,
  decodePgSessionRow,
  decodePgTelegramBindingRow,
  decodeSqliteMessageRow,
  decodeSqliteSessionRow,
  decodeSqliteTelegramBindingRow,
  openStore,
  pgSchema,
  sqliteSchema,
} from '../src/index.js';
import { pgliteHarness, postgresHarness, reportAvailability, sqliteFileHarness } from './backends.js';

interface Expected {
  session: SessionRow;
  parent: SessionRow;
  messages: MessageRow[];
  binding: TelegramTopicBinding;
}

/** Every kind of value the decoders must restore, written through the store's API. */
async function writeAndRead(store: SessionStore): Promise<Expected> {
  await store.createSession('parent', 'cli');
  await store.createSession('s', 'telegram', {
    userId: 'u1',
    model: 'gpt',
    modelConfig: { temperature: 0.5, tools: ['a', 'b'], nested: { nul: 'x\u0000y' } },
    systemPrompt: 'prompt with \u0000 NUL and \uffff',
    parentSessionId: 'parent',
  });
  await store.updateTokenCounts('s', {
    inputTokens: 2 ** 40,
    outputTokens: 7,
    estimatedCostUsd: 0.25,
    billingProvider: 'openai',
  });
  await store.setSessionTitle('s', 'A title');
  await store.requestHandoff('s', 'telegram');
  await store.appendMessage('s', 'system', 'plain text');
  await store.appendMessage('s', 'user', [
    { type: 'text', text: 'look' },
    { type: 'image_url', image_url: { url: 'data:x' } },
  ]);
  await store.appendMessage('s', 'user', { kind: 'object content', n: 1 });
  await store.appendMessage('s', 'user', '\u0000json:{"spoofed":true}');
  await store.appendMessage('s', 'assistant', 'text with \u0000 and \uffff\ufffe', {
    toolCalls: [{ id: 'c1', function: { name: 'f', arguments: '{"q":"\u0000"}' } }],
    toolCallId: 'tc',
    toolName: 'search',
    tokenCount: 12,
    finishReason: 'tool_calls',
    reasoning: 'thought',
    reasoningContent: 'longer thought',
    reasoningDetails: [{ type: 'summary', text: 'x' }],
    codexReasoningItems: [{ id: 'r1' }],
    codexMessageItems: { a: [1, 2, { b: null }] },
  });
  await store.appendMessage('s', 'tool', null, { toolCallId: 'c1' });
  await store.bindTelegramTopic({
    chatId: 100,
    threadId: 7,
    userId: 200,
    sessionKey: 'agent:main',
    sessionId: 's',
    managedMode: 'restored',
  });
  const session = (await store.getSession('s'))!;
  const parent = (await store.getSession('parent'))!;
  const messages = await store.getMessages('s');
  const binding = (await store.getTelegramTopicBinding({ chatId: 100, threadId: 7 }))!;
  // The fixture has what it claims to have: otherwise the comparisons below prove little.
  expect(messages.map((m) => typeof m.content)).toEqual(['string', 'object', 'object', 'string', 'string', 'object']);
  expect(messages[3]!.content).toBe('\u0000json:{"spoofed":true}');
  expect(session.modelConfig).toEqual({ temperature: 0.5, tools: ['a', 'b'], nested: { nul: 'x\u0000y' } });
  expect(session.handoffState).toBe('pending');
  return { session, parent, messages, binding };
}

describe('row decoders, SQLite (the app opens the same file with its own better-sqlite3 and Drizzle)', () => {
  const h = sqliteFileHarness();
  afterAll(() => h.cleanup());

  it('decodes sessions, messages and bindings exactly as the store reads them', async () => {
    const url = await h.freshUrl();
    const store = await openStore(url);
    let expected: Expected;
    try {
      expected = await writeAndRead(store);
      const client = new Database(url.slice('sqlite:'.length), { readonly: true });
      try {
        const db = drizzleSqlite(client);
        const { messages, sessions, telegramDmTopicBindings } = sqliteSchema;
        const rows = db.select().from(messages).where(eq(messages.sessionId, 's')).orderBy(asc(messages.id)).all();
        expect(rows.map(decodeSqliteMessageRow)).toEqual(expected.messages);
        const [session] = db.select().from(sessions).where(eq(sessions.id, 's')).all();
        expect(decodeSqliteSessionRow(session!)).toEqual(expected.session);
        const [parent] = db.select().from(sessions).where(eq(sessions.id, 'parent')).all();
        expect(decodeSqliteSessionRow(parent!)).toEqual(expected.parent);
        const [binding] = db.select().from(telegramDmTopicBindings).all();
        expect(decodeSqliteTelegramBindingRow(binding!)).toEqual(expected.binding);
        // A join, as an app would write it: the messages part of each row decodes the same.
        const joined = db
          .select()
          .from(messages)
          .innerJoin(sessions, eq(sessions.id, messages.sessionId))
          .orderBy(asc(messages.id))
          .all();
        expect(joined.map((r) => decodeSqliteMessageRow(r.messages))).toEqual(expected.messages);
      } finally {
        client.close();
      }
    } finally {
      await store.close();
    }
  });

  it("decodes rows read through the store's own connection (sqlite::memory:)", async () => {
    const store = await openStore('sqlite::memory:');
    try {
      const expected = await writeAndRead(store);
      if (store.dialect !== 'sqlite') throw new Error('expected a SQLite store');
      const db = drizzleSqlite(store.backend.client);
      const rows = db.select().from(sqliteSchema.messages).orderBy(asc(sqliteSchema.messages.id)).all();
      expect(rows.map(decodeSqliteMessageRow)).toEqual(expected.messages);
    } finally {
      await store.close();
    }
  });
});

describe('row decoders, PGlite (the app opens the data directory with its own PGlite and Drizzle)', () => {
  const h = pgliteHarness();
  afterAll(() => h.cleanup());

  it('decodes sessions, messages and bindings exactly as the store reads them', async () => {
    const url = await h.freshUrl();
    const store = await openStore(url);
    let expected: Expected;
    try {
      expected = await writeAndRead(store);
    } finally {
      await store.close(); // one process may hold a PGlite data directory at a time
    }
    const client = new PGlite(url.slice('pglite:'.length));
    try {
      const db = drizzlePglite(client);
      const { messages, sessions, telegramDmTopicBindings } = pgSchema;
      const rows = await db.select().from(messages).where(eq(messages.sessionId, 's')).orderBy(asc(messages.id));
      expect(rows.map(decodePgMessageRow)).toEqual(expected.messages);
      const [session] = await db.select().from(sessions).where(eq(sessions.id, 's'));
      expect(decodePgSessionRow(session!)).toEqual(expected.session);
      const [binding] = await db.select().from(telegramDmTopicBindings);
      expect(decodePgTelegramBindingRow(binding!)).toEqual(expected.binding);
    } finally {
      await client.close();
    }
    // A full migration and a second WASM Postgres boot: past 30 s on a loaded 2-core machine.
  }, 120_000);
});

const pg = await postgresHarness();
const pgAvailable = reportAvailability(pg);
describe.skipIf(!pgAvailable)(
  `row decoders, Postgres (the app's own postgres.js and Drizzle)${pgAvailable ? '' : ` (skipped: ${pg.unavailable})`}`,
  () => {
    afterAll(() => pg.cleanup());

    it('decodes sessions, messages and bindings exactly as the store reads them', async () => {
      const url = await pg.freshUrl();
      const store = await openStore(url);
      const client = postgres(url, { max: 1, onnotice: () => {} });
      try {
        const expected = await writeAndRead(store);
        const db = drizzlePostgres(client);
        const { messages, sessions, telegramDmTopicBindings } = pgSchema;
        const rows = await db.select().from(messages).where(eq(messages.sessionId, 's')).orderBy(asc(messages.id));
        expect(rows.map(decodePgMessageRow)).toEqual(expected.messages);
        const [session] = await db.select().from(sessions).where(eq(sessions.id, 's'));
        expect(decodePgSessionRow(session!)).toEqual(expected.session);
        const [binding] = await db.select().from(telegramDmTopicBindings);
        expect(decodePgTelegramBindingRow(binding!)).toEqual(expected.binding);
        const joined = await db
          .select()
          .from(messages)
          .innerJoin(sessions, eq(sessions.id, messages.sessionId))
          .orderBy(asc(messages.id));
        expect(joined.map((r) => decodePgMessageRow(r.messages))).toEqual(expected.messages);
      } finally {
        await client.end({ timeout: 5 });
        await store.close();
      }
    });
  },
);
