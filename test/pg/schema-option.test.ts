/**
 * `openStore(url, { schema })`: a store lives entirely in its own Postgres schema. Two stores in one database do
 * not see each other; a role whose search_path lacks the schema (or public) migrates and works; an app's own
 * `public.sessions` coexists; nothing of ours lands in public; and without the option the layout is today's.
 * The whole contract suite runs in a schema too (backend.pg-schema.test.ts, backend.pglite-schema.test.ts).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { eq, sql } from 'drizzle-orm';
import { drizzle } from 'drizzle-orm/postgres-js';
import postgres from 'postgres';
import { afterAll, describe, expect, it } from 'vitest';
import {
  MigrationError,
  type PgBackend,
  type SessionStore,
  ValidationError,
  hermesPgTables,
  openStore,
} from '../../src/index.js';
import { rowsOf } from '../../src/db/pg/open.js';
import { DATABASE_URL, postgresHarness, reportAvailability } from '../backends.js';

const OUR_TABLES = [
  'message_search_blocks',
  'message_search_merged',
  'message_search_recent',
  'message_search_removed',
  'messages',
  'sessions',
  'state_meta',
  'telegram_dm_topic_bindings',
  'telegram_dm_topic_mode',
];
const OUR_FUNCTIONS = [
  'message_cjk_grams',
  'message_search_queue_add',
  'message_search_queue_change',
  'message_search_queue_remove',
  'message_search_queue_reset',
  'message_search_text',
  'message_word_window',
  'session_activity_chain',
  'session_activity_messages_added',
  'session_activity_messages_changed',
  'session_activity_messages_removed',
  'session_activity_messages_truncated',
  'session_activity_recompute',
  'session_activity_session_added',
  'session_activity_session_adding',
  'session_activity_session_moved',
  'session_activity_session_removed',
  'session_activity_up',
];
// Functions pinned to the store's schema (migrations 0007 and 0009): every trigger function, and the walks
// the session-activity triggers call. The IMMUTABLE search-text functions need none.
const PLPGSQL_FUNCTIONS = OUR_FUNCTIONS.filter(
  (f) => f.startsWith('message_search_queue_') || f.startsWith('session_activity_'),
);

const backendOf = (store: SessionStore) => store.backend as PgBackend;
const query = async <T>(store: SessionStore, text: ReturnType<typeof sql>) =>
  rowsOf<T>(await backendOf(store).db.execute(text));

/** What a namespace holds: relations by kind, and functions (pg_trgm's excluded: it is an extension's, not ours). */
async function contentsOf(store: SessionStore, schema: string) {
  const relations = await query<{ relname: string; relkind: string }>(
    store,
    sql`
    SELECT c.relname, c.relkind::text AS relkind FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
    WHERE n.nspname = ${schema} AND NOT EXISTS (SELECT 1 FROM pg_catalog.pg_depend d WHERE d.classid = 'pg_class'::regclass AND d.objid = c.oid AND d.deptype = 'e')
    ORDER BY c.relname`,
  );
  const functions = await query<{ proname: string; config: string | null }>(
    store,
    sql`
    SELECT p.proname, array_to_string(p.proconfig, ',') AS config FROM pg_catalog.pg_proc p JOIN pg_catalog.pg_namespace n ON n.oid = p.pronamespace
    WHERE n.nspname = ${schema} AND NOT EXISTS (SELECT 1 FROM pg_catalog.pg_depend d WHERE d.classid = 'pg_proc'::regclass AND d.objid = p.oid AND d.deptype = 'e')
    ORDER BY p.proname`,
  );
  return {
    tables: relations.filter((r) => r.relkind === 'r').map((r) => r.relname),
    sequences: relations.filter((r) => r.relkind === 'S').map((r) => r.relname),
    all: relations.map((r) => r.relname),
    functions,
  };
}

async function extensionSchema(store: SessionStore): Promise<string | undefined> {
  const [row] = await query<{ nspname: string }>(
    store,
    sql`SELECT n.nspname FROM pg_catalog.pg_extension e
    JOIN pg_catalog.pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'pg_trgm'`,
  );
  return row?.nspname;
}

/** Writes that exercise every trigger (insert, update, delete) and both search paths. */
async function exercise(store: SessionStore, id: string, word: string): Promise<void> {
  await store.createSession(id, 'cli');
  await store.appendMessage(id, 'user', `deploy ${word} to kubernetes 记忆断裂`);
  await store.appendMessage(id, 'assistant', `rolled back ${word}`);
  expect((await store.searchMessages(word)).map((h) => h.sessionId)).toEqual([id, id]);
  expect((await store.searchMessages('记忆')).map((h) => h.sessionId)).toEqual([id]);
  expect((await store.searchMessages('忆断裂')).map((h) => h.sessionId)).toEqual([id]);
  await store.replaceMessages(id, [{ role: 'user', content: `only ${word} now` }]);
  expect(await store.messageCount({ sessionId: id })).toBe(1);
}

describe('schema option: validation', () => {
  it.each([
    ['Hermes', 'lower-case'],
    ['1hermes', 'lower-case'],
    ['a-b', 'lower-case'],
    ['a'.repeat(64), 'lower-case'],
    ['pg_hermes', 'pg_'],
    ['information_schema', 'information_schema'],
    ['hermes_sessiondb', 'hermes_sessiondb'],
  ])('refuses %s with a ValidationError before connecting', async (schema, reason) => {
    // An unreachable server: validation must come first.
    const error = await openStore('postgres://nobody@127.0.0.1:1/none', { schema }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as ValidationError).field).toBe('options.schema');
    expect((error as Error).message).toContain(reason);
  });

  it('is refused on SQLite, which has no schemas, and creates no file', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hsdb-schema-'));
    try {
      const file = path.join(dir, 'store.db');
      const error = await openStore(`sqlite:${file}`, { schema: 'hermes' }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ValidationError);
      expect((error as ValidationError).field).toBe('options.schema');
      expect(fs.existsSync(file)).toBe(false);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('hermesPgTables refuses what openStore refuses, and gives the default tables for none or public', () => {
    expect(() => hermesPgTables('pg_x')).toThrow(ValidationError);
    expect(hermesPgTables()).toBe(hermesPgTables('public'));
    expect(hermesPgTables('hermes')).toBe(hermesPgTables('hermes'));
    expect(hermesPgTables('hermes')).not.toBe(hermesPgTables());
  });
});

describe('schema option on PGlite', () => {
  const dirs: string[] = [];
  afterAll(() => {
    for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
  });

  it('keeps two schemas of one data directory apart, across reopening', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hsdb-schema-'));
    dirs.push(dir);
    const url = `pglite:${path.join(dir, 'data')}`;
    for (const [schema, id, word] of [
      ['alpha', 'sess-a', 'aardvark'],
      ['beta', 'sess-b', 'bumblebee'],
    ] as const) {
      const store = await openStore(url, { schema });
      try {
        await exercise(store, id, word);
        await store.createSession('shared-id', schema);
      } finally {
        await store.close();
      }
    }
    const alpha = await openStore(url, { schema: 'alpha' });
    try {
      expect(backendOf(alpha).schema).toBe('alpha');
      expect(await alpha.getSession('sess-b')).toBeNull();
      expect((await alpha.getSession('shared-id'))?.source).toBe('alpha');
      expect(await alpha.searchMessages('bumblebee')).toEqual([]);
      expect((await alpha.searchMessages('aardvark')).map((h) => h.sessionId)).toEqual(['sess-a']);
      expect((await contentsOf(alpha, 'public')).all).toEqual([]);
      expect((await contentsOf(alpha, 'public')).functions).toEqual([]);
      // A fresh database: pg_trgm goes where the first store put it.
      expect(await extensionSchema(alpha)).toBe('alpha');
    } finally {
      await alpha.close();
    }
  });
});

const pg = await postgresHarness();
const available = reportAvailability(pg);

describe.skipIf(!available)(`schema option on Postgres${available ? '' : ` (skipped: ${pg.unavailable})`}`, () => {
  const stores: SessionStore[] = [];
  const roles: string[] = [];
  let admin: postgres.Sql | undefined;
  const adminSql = () => (admin ??= postgres(DATABASE_URL, { max: 1, onnotice: () => {} }));
  const open = async (url: string, options?: Parameters<typeof openStore>[1]) => {
    const store = await openStore(url, options);
    stores.push(store);
    return store;
  };
  /** Run statements in the database at `url` as the admin (the test's superuser). */
  const asAdmin = async (url: string, statements: string[]) => {
    const client = postgres(url, { max: 1, onnotice: () => {} });
    try {
      for (const s of statements) await client.unsafe(s);
    } finally {
      await client.end({ timeout: 5 });
    }
  };
  const withUser = (url: string, user: string) => {
    const u = new URL(url);
    u.username = user;
    u.password = '';
    return u.toString();
  };

  afterAll(async () => {
    for (const s of stores) await s.close().catch(() => {});
    await pg.cleanup();
    if (admin) {
      for (const role of roles) await admin.unsafe(`DROP ROLE IF EXISTS "${role}"`);
      await admin.end({ timeout: 5 });
    }
  });

  it('(a) two stores in two schemas of one database see and search nothing of each other', async () => {
    const url = await pg.freshUrl();
    // Opened (and migrated) at the same moment: different schemas, one pg_trgm to create.
    const [alpha, beta] = await Promise.all([open(url, { schema: 'alpha' }), open(url, { schema: 'beta' })]);
    await exercise(alpha, 'sess-a', 'aardvark');
    await exercise(beta, 'sess-b', 'bumblebee');
    await alpha.createSession('shared-id', 'alpha');
    await beta.createSession('shared-id', 'beta');

    expect(await alpha.getSession('sess-b')).toBeNull();
    expect(await beta.getSession('sess-a')).toBeNull();
    expect((await alpha.getSession('shared-id'))?.source).toBe('alpha');
    expect((await beta.getSession('shared-id'))?.source).toBe('beta');
    expect(await alpha.searchMessages('bumblebee')).toEqual([]);
    expect(await beta.searchMessages('aardvark')).toEqual([]);
    expect((await alpha.searchMessages('kubernetes')).map((h) => h.sessionId)).toEqual([]); // replaced away
    expect((await alpha.searchMessages('only')).map((h) => h.sessionId)).toEqual(['sess-a']);
    expect((await beta.searchMessages('only')).map((h) => h.sessionId)).toEqual(['sess-b']);
    expect((await alpha.listSessionsRich()).map((s) => s.id).sort()).toEqual(['sess-a', 'shared-id']);
    expect(await beta.messageCount()).toBe(1);
    // Each store its own migration history: both fully migrated, neither in the other's way.
    const total = (await alpha.migrationStatus()).applied.length;
    expect(total).toBeGreaterThan(0);
    expect(await beta.migrationStatus()).toEqual(await alpha.migrationStatus());
    // Deleting in one schema leaves the other's same-named session alone.
    expect(await alpha.deleteSession('shared-id')).toBe(true);
    expect((await beta.getSession('shared-id'))?.source).toBe('beta');
  });

  it("(b) a role whose search_path is only 'app' migrates and works, in a schema and in the default layout", async () => {
    const role = `hsdb_app_${process.pid}`;
    roles.push(role);
    await adminSql().unsafe(`CREATE ROLE "${role}" LOGIN`);
    await adminSql().unsafe(`ALTER ROLE "${role}" SET search_path = app`);

    // In a schema: the role may create schemas in the database but owns nothing else (PG15: no CREATE on public).
    const inSchemaUrl = await pg.freshUrl();
    await asAdmin(inSchemaUrl, [
      `GRANT CREATE ON DATABASE "${new URL(inSchemaUrl).pathname.slice(1)}" TO "${role}"`,
      `CREATE SCHEMA app AUTHORIZATION "${role}"`,
    ]);
    const inSchema = await open(withUser(inSchemaUrl, role), { schema: 'hermes' });
    const [seen] = await query<{ path: string }>(inSchema, sql`SELECT current_setting('search_path') AS path`);
    expect(seen!.path).toBe('app');
    await exercise(inSchema, 'sess-s', 'sidewinder');
    expect((await contentsOf(inSchema, 'hermes')).tables).toEqual(
      OUR_TABLES.concat('__hermes_sessiondb_migrations').sort(),
    );
    expect((await contentsOf(inSchema, 'app')).all).toEqual([]);

    // The default layout: tables in public (the role owns the database, as PG15 requires to create there).
    const defaultUrl = await pg.freshUrl();
    await asAdmin(defaultUrl, [
      `ALTER DATABASE "${new URL(defaultUrl).pathname.slice(1)}" OWNER TO "${role}"`,
      `CREATE SCHEMA app AUTHORIZATION "${role}"`,
    ]);
    const layout = await open(withUser(defaultUrl, role));
    await exercise(layout, 'sess-d', 'dormouse');
    expect((await contentsOf(layout, 'public')).tables).toEqual(OUR_TABLES);
    expect((await contentsOf(layout, 'app')).all).toEqual([]);
    // Reopened (the migrator's fast path) and written again by a connection whose search_path lacks public.
    await layout.close();
    const again = await open(withUser(defaultUrl, role));
    await again.appendMessage('sess-d', 'user', 'dormouse again');
    expect((await again.searchMessages('dormouse')).map((h) => h.sessionId)).toEqual(['sess-d', 'sess-d']);
  });

  it("(c) an app's own public.sessions (an auth table) coexists with the store in schema 'hermes'", async () => {
    const url = await pg.freshUrl();
    await asAdmin(url, [
      'CREATE TABLE public.sessions (token text PRIMARY KEY, user_id integer NOT NULL, expires_at timestamptz NOT NULL)',
      "INSERT INTO public.sessions VALUES ('tok-1', 42, '2030-01-01')",
    ]);
    // Without the option the store refuses the database (a sessions table, no history of ours).
    const refused = await openStore(url).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(MigrationError);
    expect((refused as MigrationError).reason).toBe('FOREIGN_DATABASE');

    const store = await open(url, { schema: 'hermes' });
    await exercise(store, 'agent-1', 'wombat');
    expect(await store.sessionCount()).toBe(1);
    const auth = await query<{ token: string; user_id: number }>(
      store,
      sql`SELECT token, user_id FROM public.sessions`,
    );
    expect(auth).toEqual([{ token: 'tok-1', user_id: 42 }]);

    // The app's own Drizzle reads our tables in 'hermes' with hermesPgTables, next to its own table.
    const client = postgres(url, { max: 1, onnotice: () => {} });
    try {
      const app = drizzle(client);
      const t = hermesPgTables('hermes');
      const rows = await app
        .select({ session: t.sessions.id, content: t.messages.content })
        .from(t.messages)
        .innerJoin(t.sessions, eq(t.sessions.id, t.messages.sessionId))
        .where(eq(t.sessions.id, 'agent-1'));
      expect(rows).toEqual([{ session: 'agent-1', content: 'only wombat now' }]);
      const [authRow] = await app.execute<{ n: number }>(sql`SELECT count(*)::int AS n FROM public.sessions`);
      expect(authRow?.n).toBe(1);
    } finally {
      await client.end({ timeout: 5 });
    }
  });

  it('(d) with a schema, nothing of ours is created in public (pg_trgm goes to the store schema on a fresh database)', async () => {
    const url = await pg.freshUrl();
    const store = await open(url, { schema: 'hermes' });
    await exercise(store, 's', 'quokka');
    expect((await contentsOf(store, 'public')).all).toEqual([]);
    expect((await contentsOf(store, 'public')).functions).toEqual([]);
    const [drizzleSchema] = await query<{ n: number }>(
      store,
      sql`SELECT count(*)::int AS n FROM pg_catalog.pg_namespace WHERE nspname = 'drizzle'`,
    );
    expect(drizzleSchema!.n).toBe(0);
    expect(await extensionSchema(store)).toBe('hermes');

    const mine = await contentsOf(store, 'hermes');
    expect(mine.tables).toEqual(OUR_TABLES.concat('__hermes_sessiondb_migrations').sort());
    expect(mine.sequences.sort()).toEqual([
      '__hermes_sessiondb_migrations_id_seq',
      'message_search_removed_seq_seq',
      'messages_id_seq',
    ]);
    expect(mine.functions.map((f) => f.proname)).toEqual(OUR_FUNCTIONS);
    // The trigger functions carry their search_path (migration 0007); the SQL-standard ones need none.
    for (const f of mine.functions) {
      expect(f.config, f.proname).toBe(PLPGSQL_FUNCTIONS.includes(f.proname) ? 'search_path="hermes"' : null);
    }
    const triggers = await query<{ n: number }>(
      store,
      sql`SELECT count(*)::int AS n FROM pg_catalog.pg_trigger t
      JOIN pg_catalog.pg_class c ON c.oid = t.tgrelid JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
      WHERE n.nspname = 'hermes' AND NOT t.tgisinternal`,
    );
    // 4 for search (0010's queue), 8 for session activity (0009).
    expect(triggers[0]!.n).toBe(12);
    // introspect() describes the store's schema.
    const live = await store.introspect();
    expect(Object.keys(live.tables).sort()).toEqual(OUR_TABLES);
    expect(live.triggers).toHaveLength(12);
  });

  it('(d) uses a pg_trgm installed elsewhere (public) without creating anything in public', async () => {
    const url = await pg.freshUrl();
    await asAdmin(url, ['CREATE EXTENSION pg_trgm SCHEMA public']);
    const store = await open(url, { schema: 'hermes' });
    await exercise(store, 's', 'numbat');
    expect(await extensionSchema(store)).toBe('public');
    expect(await backendOf(store).trigramSeesMultibyte()).toBe(true);
    expect((await contentsOf(store, 'public')).all).toEqual([]);
    // The trigger functions can see it.
    const [config] = (await contentsOf(store, 'hermes')).functions.filter(
      (f) => f.proname === 'message_search_queue_add',
    );
    expect(config!.config).toBe('search_path="hermes", "public"');
  });

  it('(e) without the option the layout is unchanged: tables in public, history in hermes_sessiondb.__hermes_sessiondb_migrations', async () => {
    const url = await pg.freshUrl();
    const store = await open(url);
    await exercise(store, 's', 'platypus');
    expect(backendOf(store).schema).toBe('public');
    expect((await contentsOf(store, 'public')).tables).toEqual(OUR_TABLES);
    expect(await extensionSchema(store)).toBe('public');
    const [history] = await query<{ n: number }>(
      store,
      sql`SELECT count(*)::int AS n FROM hermes_sessiondb.__hermes_sessiondb_migrations`,
    );
    expect(history!.n).toBe((await store.migrationStatus()).applied.length);
    const functions = (await contentsOf(store, 'public')).functions;
    expect(functions.map((f) => f.proname)).toEqual(OUR_FUNCTIONS);
    for (const f of functions)
      expect(f.config, f.proname).toBe(PLPGSQL_FUNCTIONS.includes(f.proname) ? 'search_path="public"' : null);
    // 'public' spelled out is the same store.
    await store.close();
    const same = await open(url, { schema: 'public' });
    expect((await same.getSession('s'))?.id).toBe('s');
    expect((await same.migrationStatus()).pending).toEqual([]);
  });
});
