/**
 * The Postgres design, on PGlite and the real server: column types, pg_trgm, the generated tsvector and
 * the trigram index, and the codecs that make the TypeScript values equal to SQLite's (epoch seconds
 * exact to the microsecond, parsed JSON, preserved ids).
 */
import { eq, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  MigrationError,
  type PgBackend,
  type SessionStore,
  UnsupportedLocaleError,
  openStore,
  pgSchema,
} from '../../src/index.js';
import { rowsOf } from '../../src/db/pg/open.js';
import { type Harness, pgliteHarness, postgresHarness, reportAvailability } from '../backends.js';

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
    search_vector: 'tsvector',
    search_length: 'integer',
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
  // BM25's corpus totals (migration 0004), kept by triggers on messages.
  message_search_stats: { shard: 'integer', docs: 'bigint', tokens: 'bigint' },
  // The block index (migration 0010): postings in blocks per term, the recent segment, removals, totals.
  message_search_blocks: {
    kind: 'smallint',
    term: 'bytea',
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
      expect(schema.tables.messages!.find((c) => c.name === 'search_vector')?.generated).toBe(true);
    });

    it('installs pg_trgm and indexes the searchable text with it and with a tsvector GIN index', async () => {
      const schema = await store.introspect();
      expect(schema.extensions).toContain('pg_trgm');
      const defs = await rows<{ indexname: string; indexdef: string }>(
        sql`SELECT indexname, indexdef FROM pg_indexes WHERE tablename = 'messages' AND indexname LIKE 'idx_messages_search%'`,
      );
      const byName = Object.fromEntries(defs.map((d) => [d.indexname, d.indexdef]));
      expect(byName.idx_messages_search_trgm).toMatch(/USING gin \(message_search_text\(.*\) gin_trgm_ops\)/);
      expect(byName.idx_messages_search_vector).toMatch(/USING gin \(search_vector\)/);
    });

    it('keeps the tsvector and the trigram text in step with inserts and updates', async () => {
      await backend.db.insert(pgSchema.sessions).values({ id: 'fts', source: 'cli', startedAt: 1 });
      const [msg] = await backend.db
        .insert(pgSchema.messages)
        .values({
          sessionId: 'fts',
          role: 'assistant',
          content: 'Deploy with Docker',
          toolName: 'web_search',
          toolCalls: [{ function: { name: 'UNIQUEFUNC', arguments: '{"q": "记忆断裂"}' } }],
          timestamp: 2,
        })
        .returning({ id: pgSchema.messages.id });
      const matches = async (tsquery: string) =>
        (
          await rows<{ id: string | number }>(
            sql`SELECT id FROM messages WHERE search_vector @@ to_tsquery('simple', ${tsquery})`,
          )
        ).map((r) => Number(r.id));
      const substring = async (needle: string) =>
        (
          await rows<{ id: string | number }>(
            sql`SELECT id FROM messages WHERE message_search_text(content, content_json, tool_name, tool_calls) ILIKE ${`%${needle}%`}`,
          )
        ).map((r) => Number(r.id));
      expect(await matches('docker')).toEqual([msg!.id]); // lower-cased like unicode61
      expect(await matches('web_search')).toEqual([msg!.id]);
      expect(await matches('uniquefunc')).toEqual([msg!.id]);
      expect(await substring('记忆断裂')).toEqual([msg!.id]);

      await backend.db
        .update(pgSchema.messages)
        .set({ content: 'now kubernetes' })
        .where(eq(pgSchema.messages.id, msg!.id));
      expect(await matches('docker')).toEqual([]);
      expect(await matches('kubernetes')).toEqual([msg!.id]);
    });

    it('lets the planner use the trigram index for a substring query', async () => {
      const plan = await backend.db.transaction(async (tx) => {
        await tx.execute(sql`SET LOCAL enable_seqscan = off`);
        return rowsOf<Record<string, string>>(
          await tx.execute(
            sql`EXPLAIN SELECT id FROM messages WHERE message_search_text(content, content_json, tool_name, tool_calls) ILIKE '%断裂连接%'`,
          ),
        );
      });
      expect(plan.map((r) => Object.values(r)[0]).join('\n')).toContain('idx_messages_search_trgm');
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

    it('finds non-ASCII words under a UTF-8 LC_CTYPE, and refuses a database under LC_CTYPE C before writing to it', async () => {
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
      const listener = (w: Error & { code?: string }) => {
        if (w.code === 'HERMES_SESSIONDB_CTYPE') warnings.push(w.message);
      };
      process.on('warning', listener);
      try {
        const refused = await openStore(url.toString()).then(
          () => null,
          (e: unknown) => e,
        );
        expect(refused).toBeInstanceOf(UnsupportedLocaleError);
        expect((refused as UnsupportedLocaleError).ctype).toBe('C');
        expect((refused as Error).message).toMatch(/LC_CTYPE is 'C'.*привет.*C\.UTF-8.*hermes-sessiondb copy/s);
        // Nothing was migrated into it.
        const probe = await openStore(url.toString(), { migrate: false, allowAsciiOnlyCtype: true });
        try {
          expect((await probe.migrationStatus()).applied).toEqual([]);
        } finally {
          await probe.close();
        }
        // Reading such a database out is allowed, with a warning.
        const reader = await openStore(url.toString(), { allowAsciiOnlyCtype: true });
        try {
          expect(await (reader.backend as PgBackend).trigramSeesMultibyte()).toBe(false);
          await new Promise((resolve) => setImmediate(resolve));
          expect(warnings.join('\n')).toMatch(/LC_CTYPE is 'C'/);
        } finally {
          await reader.close();
        }
      } finally {
        process.off('warning', listener);
        const cleanup = await openStore(adminUrl, { migrate: false });
        await (cleanup.backend as PgBackend).db.execute(sql.raw(`DROP DATABASE IF EXISTS "${cName}" WITH (FORCE)`));
        await cleanup.close();
      }
    });
  },
);

for (const h of [pgliteHarness(), await postgresHarness()]) {
  const available = reportAvailability(h);
  describe.skipIf(!available)(`BM25 statistics [${h.name}]${available ? '' : ` (skipped: ${h.unavailable})`}`, () => {
    afterAll(() => h.cleanup());

    it('keeps message_search_stats and the block index equal to the messages table through inserts, replaces, updates, deletes and truncation', async () => {
      const store = await h.open();
      const backend = store.backend as PgBackend;
      const rows = async <T>(query: ReturnType<typeof sql>) => rowsOf<T>(await backend.db.execute(query));
      const check = async () => {
        const [stats] = await rows<{ docs: string; tokens: string }>(
          sql`SELECT COALESCE(sum(docs), 0)::text AS docs, COALESCE(sum(tokens), 0)::text AS tokens FROM message_search_stats`,
        );
        // FTS5's lengths: structured content has one more word on SQLite ("json" of its "\x00json:" marker).
        const [real] = await rows<{ docs: string; tokens: string }>(
          sql`SELECT count(*)::text AS docs, COALESCE(sum(search_length + (content_json IS NOT NULL)::int), 0)::text AS tokens FROM messages`,
        );
        expect(stats).toEqual(real);
        // The block index (migration 0010): after a search's catch-up, every message is indexed once, in the
        // recent segment or the blocks, and nothing waits.
        await store.searchMessages('word');
        const [index] = await rows<{ queued: number; removed: number; indexed: number }>(sql`SELECT
            (SELECT count(*)::int FROM message_search_recent WHERE words IS NULL) AS queued,
            (SELECT count(*)::int FROM message_search_removed) AS removed,
            (SELECT count(*)::int FROM message_search_recent) + (SELECT messages::int FROM message_search_merged WHERE kind = 0) AS indexed`);
        expect(index).toEqual({ queued: 0, removed: 0, indexed: Number(real!.docs) });
        return Number(real!.docs);
      };
      try {
        await store.createSession('a', 'cli');
        await store.createSession('b', 'cli');
        for (let i = 0; i < 20; i++) await store.appendMessage(i % 2 ? 'a' : 'b', 'user', `word ${'x '.repeat(i)} end`);
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
        // The word count is FTS5's: every run of letters and digits in content, tool name and tool-call JSON.
        const [one] = await rows<{ n: number }>(
          sql`SELECT search_length AS n FROM messages WHERE content = 'one two three'`,
        );
        expect(one!.n).toBe(3);
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
  });
}
