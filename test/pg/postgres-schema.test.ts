/**
 * The Postgres design, on PGlite and the real server: column types, pg_trgm, the search structures that remain
 * on messages (the CJK grams; migration 0011 dropped the tsvector and trigram index), and the codecs that make the TypeScript values equal to SQLite's (epoch seconds
 * exact to the microsecond, parsed JSON, preserved ids).
 */
import { eq, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MigrationError, type PgBackend, type SessionStore, openStore, pgSchema } from '../../src/index.js';
import { rowsOf } from '../../src/db/pg/open.js';
import { type Harness, pgliteHarness, postgresHarness, reportAvailability } from '../backends.js';
import { SCRIPT_WORDS, multilingualTexts } from '../helpers/multilingual.js';

/** The type each Hermes column gets on Postgres: the design decision under test. */
const EXPECTED_TYPES: Record<string, Record<string, string>> = {
  sessions: {
    id: 'text',
    source: 'text',
    user_id: 'text',
    model: 'text',
    model_config: 'jsonb',
    system_prompt: 'text',
    parent_session_id: 'text',
    started_at: 'timestamp with time zone',
    ended_at: 'timestamp with time zone',
    end_reason: 'text',
    message_count: 'bigint',
    tool_call_count: 'bigint',
    input_tokens: 'bigint',
    output_tokens: 'bigint',
    cache_read_tokens: 'bigint',
    cache_write_tokens: 'bigint',
    // Ours (migration 0008), kept by triggers for the activity order.
    last_message_at: 'timestamp with time zone',
    chain_last_active: 'timestamp with time zone',
    reasoning_tokens: 'bigint',
    billing_provider: 'text',
    billing_base_url: 'text',
    billing_mode: 'text',
    estimated_cost_usd: 'double precision',
    actual_cost_usd: 'double precision',
    cost_status: 'text',
    cost_source: 'text',
    pricing_version: 'text',
    title: 'text',
    api_call_count: 'bigint',
    handoff_state: 'text',
    handoff_platform: 'text',
    handoff_error: 'text',
  },
  messages: {
    id: 'bigint',
    session_id: 'text',
    role: 'text',
    content: 'text',
    content_json: 'jsonb',
    tool_call_id: 'text',
    tool_calls: 'jsonb',
    tool_name: 'text',
    timestamp: 'timestamp with time zone',
    token_count: 'integer',
    finish_reason: 'text',
    reasoning: 'text',
    reasoning_content: 'text',
    reasoning_details: 'jsonb',
    codex_reasoning_items: 'jsonb',
    codex_message_items: 'jsonb',
    search_cjk: 'array',
  },
  state_meta: { key: 'text', value: 'text' },
  telegram_dm_topic_mode: {
    chat_id: 'text',
    user_id: 'text',
    enabled: 'boolean',
    activated_at: 'timestamp with time zone',
    updated_at: 'timestamp with time zone',
    has_topics_enabled: 'boolean',
    allows_users_to_create_topics: 'boolean',
    capability_checked_at: 'timestamp with time zone',
    intro_message_id: 'text',
    pinned_message_id: 'text',
  },
  telegram_dm_topic_bindings: {
    chat_id: 'text',
    thread_id: 'text',
    user_id: 'text',
    session_key: 'text',
    session_id: 'text',
    managed_mode: 'text',
    linked_at: 'timestamp with time zone',
    updated_at: 'timestamp with time zone',
  },
  // The block index (migration 0010): postings in blocks per term, the recent segment, removals, totals.
  message_search_blocks: {
    kind: 'smallint',
    term: 'bytea',
    // A term over 1 KB whole (migration 0012); its key is `term`.
    full_term: 'bytea',
    first_id: 'bigint',
    last_id: 'bigint',
    count: 'integer',
    bound: 'bytea',
    data: 'bytea',
  },
  message_search_recent: { message_id: 'bigint', words: 'bytea', trigrams: 'bytea' },
  message_search_removed: {
    seq: 'bigint',
    message_id: 'bigint',
    content: 'text',
    content_json: 'jsonb',
    tool_name: 'text',
    tool_calls: 'jsonb',
  },
  message_search_merged: { kind: 'smallint', messages: 'bigint', tokens: 'bigint' },
};

const harnesses: Harness[] = [pgliteHarness(), await postgresHarness()];

for (const h of harnesses) {
  const available = reportAvailability(h);
  describe.skipIf(!available)(`Postgres schema [${h.name}]${available ? '' : ` (skipped: ${h.unavailable})`}`, () => {
    let store: SessionStore;
    let backend: PgBackend;
    const rows = async <T>(query: ReturnType<typeof sql>) => rowsOf<T>(await backend.db.execute(query));

    beforeAll(async () => {
      store = await h.open();
      backend = store.backend as PgBackend;
    });
    afterAll(async () => {
      await store?.close();
      await h.cleanup();
    });

    it('types every column as designed', async () => {
      const schema = await store.introspect();
      const actual = Object.fromEntries(
        Object.entries(schema.tables).map(([t, cols]) => [t, Object.fromEntries(cols.map((c) => [c.name, c.type]))]),
      );
      expect(actual).toEqual(EXPECTED_TYPES);
      const counters = schema.tables.sessions!.filter((c) => /_count$|_tokens$/.test(c.name));
      expect(counters.every((c) => c.notNull && c.defaultValue === '0')).toBe(true);
      expect(schema.tables.messages!.find((c) => c.name === 'search_cjk')?.generated).toBe(true);
    });

    it('installs pg_trgm and keeps one search index on messages: the CJK grams (the block index replaced the rest)', async () => {
      const schema = await store.introspect();
      expect(schema.extensions).toContain('pg_trgm');
      const defs = await rows<{ indexname: string; indexdef: string }>(
        sql`SELECT indexname, indexdef FROM pg_indexes WHERE tablename = 'messages' AND indexname LIKE 'idx_messages_search%'`,
      );
      expect(defs.map((d) => d.indexname)).toEqual(['idx_messages_search_cjk']);
      expect(defs[0]!.indexdef).toMatch(/USING gin \(search_cjk\)/);
      const stats = await rows<{ n: number }>(
        sql`SELECT count(*)::int AS n FROM pg_class WHERE relname = 'message_search_stats'`,
      );
      expect(stats[0]!.n).toBe(0);
    });

    it('finds rows written around the store, and their new text after an update, through the block index', async () => {
      await backend.db.insert(pgSchema.sessions).values({ id: 'fts', source: 'cli', startedAt: 1 });
      const [msg] = await backend.db
        .insert(pgSchema.messages)
        .values({
          sessionId: 'fts',
          role: 'assistant',
          content: 'Deploy with Docker, 记忆断裂',
          toolName: 'web_search',
          toolCalls: [{ function: { name: 'UNIQUEFUNC', arguments: '{"q": "记忆断裂"}' } }],
          timestamp: 2,
        })
        .returning({ id: pgSchema.messages.id });
      const found = async (query: string) => (await store.searchMessages(query)).map((h) => h.id);
      expect(await found('docker')).toEqual([msg!.id]); // lower-cased like unicode61
      expect(await found('web_search')).toEqual([msg!.id]);
      expect(await found('uniquefunc')).toEqual([msg!.id]);
      // CJK in content (in tool-call JSON it is \u-escaped, as Hermes indexes it: not findable there).
      expect(await found('记忆断裂')).toEqual([msg!.id]);
      expect(await found('断裂')).toEqual([msg!.id]); // short CJK: the gram index narrows Hermes' LIKE scan

      await backend.db
        .update(pgSchema.messages)
        .set({ content: 'now kubernetes' })
        .where(eq(pgSchema.messages.id, msg!.id));
      expect(await found('docker')).toEqual([]);
      expect(await found('kubernetes')).toEqual([msg!.id]);
      expect(await found('记忆断裂')).toEqual([]);
    });

    it('lets the planner use the CJK gram index for a short CJK term', async () => {
      const plan = await backend.db.transaction(async (tx) => {
        await tx.execute(sql`SET LOCAL enable_seqscan = off`);
        return rowsOf<Record<string, string>>(
          await tx.execute(sql`EXPLAIN SELECT id FROM messages WHERE search_cjk @> ARRAY['断裂']::text[]`),
        );
      });
      expect(plan.map((r) => Object.values(r)[0]).join('\n')).toContain('idx_messages_search_cjk');
    });

    it('round-trips epoch seconds exactly to the microsecond and JSON as values', async () => {
      const startedAt = 1793491200.123456;
      const endedAt = 1793491260.000001;
      const config = { provider: 'anthropic', nested: { list: [1, 'two', null], flag: true }, text: 'ü 记忆 "q"' };
      await backend.db
        .insert(pgSchema.sessions)
        .values({ id: 'rt', source: 'cli', startedAt, endedAt, modelConfig: config });
      const [row] = await backend.db.select().from(pgSchema.sessions).where(eq(pgSchema.sessions.id, 'rt'));
      expect(row!.startedAt).toBe(startedAt);
      expect(row!.endedAt).toBe(endedAt);
      expect(row!.modelConfig).toEqual(config);
      expect(row!.messageCount).toBe(0);
      const [stored] = await rows<{ kind: string; epoch: string }>(
        sql`SELECT jsonb_typeof(model_config) AS kind, extract(epoch FROM started_at)::text AS epoch FROM sessions WHERE id = 'rt'`,
      );
      expect(stored).toEqual({ kind: 'object', epoch: '1793491200.123456' });
    });

    it('keeps message ids that an import supplies, and refuses content in both forms at once', async () => {
      await backend.db.insert(pgSchema.sessions).values({ id: 'ids', source: 'cli', startedAt: 1 });
      const [kept] = await backend.db
        .insert(pgSchema.messages)
        .values({
          id: 424242,
          sessionId: 'ids',
          role: 'user',
          contentJson: [{ type: 'text', text: 'hi' }],
          timestamp: 1,
        })
        .returning();
      expect(kept).toMatchObject({ id: 424242, content: null, contentJson: [{ type: 'text', text: 'hi' }] });
      await expect(
        backend.db
          .insert(pgSchema.messages)
          .values({ sessionId: 'ids', role: 'user', content: 'x', contentJson: ['x'], timestamp: 1 }),
      ).rejects.toThrow();
    });

    it('refuses to migrate a database that has a sessions table but no migration history', async () => {
      const url = await h.freshUrl();
      const bare = await openStore(url, { migrate: false });
      try {
        await (bare.backend as PgBackend).db.execute(sql`CREATE TABLE sessions (id text PRIMARY KEY)`);
      } finally {
        await bare.close();
      }
      const error = await openStore(url).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(MigrationError);
      expect((error as MigrationError).reason).toBe('FOREIGN_DATABASE');
    });
  });
}

const server = await postgresHarness();
const serverAvailable = reportAvailability(server);
describe.skipIf(!serverAvailable)(
  `pg_trgm and the database locale [postgres]${serverAvailable ? '' : ` (skipped: ${server.unavailable})`}`,
  () => {
    afterAll(() => server.cleanup());

    it('finds non-ASCII words under a UTF-8 LC_CTYPE', async () => {
      const good = await server.open();
      try {
        expect(await (good.backend as PgBackend).trigramSeesMultibyte()).toBe(true);
        await good.createSession('s', 'cli');
        const id = await good.appendMessage('s', 'user', 'Привет из Straße, 记忆断裂 again');
        for (const q of ['привет', 'straße', 'Straße', '记忆断裂'])
          expect(
            (await good.searchMessages(q)).map((h) => h.id),
            q,
          ).toEqual([id]);
      } finally {
        await good.close();
      }
    });

    // The library tokenizes (migration 0010), so Postgres' own idea of a letter no longer decides what is found.
    it('serves a database under LC_CTYPE C, without a warning, with the answers SQLite gives for text in every script', async () => {
      const adminUrl = await server.freshUrl();
      const url = new URL(adminUrl);
      const cName = `${url.pathname.slice(1)}_c`;
      const admin = await openStore(adminUrl, { migrate: false });
      try {
        await (admin.backend as PgBackend).db.execute(
          sql.raw(`CREATE DATABASE "${cName}" LC_CTYPE 'C' LC_COLLATE 'C' TEMPLATE template0`),
        );
      } finally {
        await admin.close();
      }
      url.pathname = `/${cName}`;
      const warnings: string[] = [];
      const listener = (w: Error) => warnings.push(w.message);
      process.on('warning', listener);
      const sqlite = await openStore('sqlite::memory:');
      let store: SessionStore | undefined;
      try {
        store = await openStore(url.toString());
        expect(await (store.backend as PgBackend).trigramSeesMultibyte()).toBe(false);
        const texts = multilingualTexts(2_000, 7);
        for (const target of [store, sqlite]) {
          for (let s = 0; s < 10; s++) {
            await target.createSession(`s${s}`, 'cli');
            await target.appendMessages(
              `s${s}`,
              texts.slice(s * 200, (s + 1) * 200).map((content) => ({ role: 'user', content })),
            );
          }
        }
        const words = Object.values(SCRIPT_WORDS).flat();
        const queries = [
          ...words,
          ...words.map((w) => w.toLowerCase()),
          ...words.map((w) => w.toUpperCase()),
          'cafe',
          'resume',
          'istanbul',
          'strasse',
          '记忆',
          '服务',
          'こん',
          '"docker compose"',
          'dep*',
          'сообщ*',
          'привет OR नमस्ते',
          'Straße NOT café',
          '"chat-send"',
        ];
        let found = 0;
        for (const q of queries)
          for (const sort of ['relevance', 'newest'] as const) {
            const expected = (await sqlite.searchMessages(q, { sort, limit: 50 })).map((h) => h.id);
            expect(
              (await store.searchMessages(q, { sort, limit: 50 })).map((h) => h.id),
              `${q} (${sort})`,
            ).toEqual(expected);
            if (expected.length > 0) found++;
          }
        // The comparison is not of empty lists.
        expect(found).toBeGreaterThan(queries.length);
        await new Promise((resolve) => setImmediate(resolve));
        expect(warnings.filter((w) => /LC_CTYPE/.test(w))).toEqual([]);
      } finally {
        process.off('warning', listener);
        await store?.close();
        await sqlite.close();
        const cleanup = await openStore(adminUrl, { migrate: false });
        await (cleanup.backend as PgBackend).db.execute(sql.raw(`DROP DATABASE IF EXISTS "${cName}" WITH (FORCE)`));
        await cleanup.close();
      }
    });
  },
);

for (const h of [pgliteHarness(), await postgresHarness()]) {
  const available = reportAvailability(h);
  describe.skipIf(!available)(
    `Block index upkeep [${h.name}]${available ? '' : ` (skipped: ${h.unavailable})`}`,
    () => {
      afterAll(() => h.cleanup());

      it('vacuums the queue tables once catch-ups left 2,000 dead rows in them (autovacuum may be off; PGlite has none)', async () => {
        const store = await h.open();
        const backend = store.backend as PgBackend;
        const vacuumed = async () =>
          rowsOf<{ relname: string; n: number }>(
            await backend.db.execute(sql`SELECT relname, vacuum_count::int AS n FROM pg_stat_user_tables
            WHERE relname IN ('message_search_recent', 'message_search_removed') ORDER BY relname`),
          );
        try {
          await store.createSession('v', 'cli');
          await store.appendMessages(
            'v',
            Array.from({ length: 1_000 }, (_, i) => ({ role: 'user' as const, content: `queued word ${i}` })),
          );
          // 1,000 rows tokenized (rewritten): not yet worth a VACUUM.
          expect(await store.searchMessages('queued')).toHaveLength(20);
          expect((await vacuumed()).map((r) => r.n)).toEqual([0, 0]);
          await store.appendMessages(
            'v',
            Array.from({ length: 1_500 }, (_, i) => ({ role: 'user' as const, content: `queued word ${i}` })),
          );
          // 1,500 more tokenized and 2,000 merged out of the queue.
          expect(await store.searchMessages('queued')).toHaveLength(20);
          expect((await vacuumed()).map((r) => r.n)).toEqual([1, 1]);
        } finally {
          await store.close();
        }
      });

      it('keeps the block index equal to the messages table through inserts, replaces, updates, deletes and truncation', async () => {
        const store = await h.open();
        const backend = store.backend as PgBackend;
        const rows = async <T>(query: ReturnType<typeof sql>) => rowsOf<T>(await backend.db.execute(query));
        const check = async () => {
          const [real] = await rows<{ docs: number }>(sql`SELECT count(*)::int AS docs FROM messages`);
          // After a search's catch-up, every message is indexed once, in the recent segment or the blocks, and
          // nothing waits. (bm25's token totals: test/pg/search-blocks.test.ts ranks as FTS5 through the same writes.)
          await store.searchMessages('word');
          const [index] = await rows<{ queued: number; removed: number; indexed: number }>(sql`SELECT
            (SELECT count(*)::int FROM message_search_recent WHERE words IS NULL) AS queued,
            (SELECT count(*)::int FROM message_search_removed) AS removed,
            (SELECT count(*)::int FROM message_search_recent) + (SELECT messages::int FROM message_search_merged WHERE kind = 0) AS indexed`);
          expect(index).toEqual({ queued: 0, removed: 0, indexed: real!.docs });
          return real!.docs;
        };
        try {
          await store.createSession('a', 'cli');
          await store.createSession('b', 'cli');
          for (let i = 0; i < 20; i++)
            await store.appendMessage(i % 2 ? 'a' : 'b', 'user', `word ${'x '.repeat(i)} end`);
          await store.appendMessages('a', [
            { role: 'user', content: 'one two three' },
            {
              role: 'assistant',
              content: null,
              toolCalls: [{ id: 'c', function: { name: 'run', arguments: '{"q": "four five"}' } }],
            },
            { role: 'assistant', content: [{ type: 'text', text: 'structured six' }] },
          ]);
          expect(await check()).toBe(23);
          await store.replaceMessages('b', [{ role: 'user', content: 'replaced with five words here' }]);
          expect(await check()).toBe(14);
          await backend.db.execute(
            sql`UPDATE messages SET content = 'now much longer content than before it was' WHERE content = 'one two three'`,
          );
          await check();
          await store.deleteSession('a');
          expect(await check()).toBe(1);
          await backend.db.execute(sql`TRUNCATE messages, sessions, telegram_dm_topic_bindings`);
          expect(await check()).toBe(0);
        } finally {
          await store.close();
        }
      });
    },
  );
}
