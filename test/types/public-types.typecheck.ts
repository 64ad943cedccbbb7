/**
 * Type-level tests of the public API: this file is never run, only compiled (`npm run typecheck` covers
 * test/). Each `@ts-expect-error` line must be an error, or the compile fails: a wrong literal that
 * compiles again, or a narrowing that stops working, breaks the typecheck.
 */
import {
  type AnySessionStore,
  type HandoffStatus,
  type HermesRole,
  type MessageRow,
  type MysqlBackend,
  type PgBackend,
  type SearchSort,
  type SessionRow,
  type SessionStore,
  type SqliteBackend,
  type TelegramManagedMode,
  decodePgMessageRow,
  decodeSqliteMessageRow,
  openStore,
  pgSchema,
  sqliteSchema,
} from '../../src/index.js';

type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
const assertType = <T extends true>(_proof?: T): void => {};

export async function narrowing(): Promise<void> {
  const store = await openStore('sqlite::memory:');
  assertType<Equal<typeof store, AnySessionStore>>();
  if (store.dialect === 'sqlite') {
    // No cast: the dialect narrows the backend.
    const client: SqliteBackend['client'] = store.backend.client;
    client.pragma('journal_mode');
    store.backend.db.select().from(sqliteSchema.messages).all();
    // @ts-expect-error a SQLite store has no Postgres transaction
    void store.backend.transaction;
  } else if (store.dialect === 'pg') {
    assertType<Equal<typeof store.dialect, 'pg'>>();
    const pg: PgBackend = store.backend;
    await pg.db.select().from(pgSchema.messages);
    // @ts-expect-error a Postgres store has no better-sqlite3 client
    void store.backend.client;
  } else {
    assertType<Equal<typeof store.dialect, 'mysql'>>();
    const mysql: MysqlBackend = store.backend;
    void mysql.pool;
    // @ts-expect-error a MySQL store has no Drizzle Postgres database
    void store.backend.db;
  }
  // Code that names SessionStore keeps compiling, and the wide type still offers the union of backends.
  const named: SessionStore = store;
  assertType<Equal<typeof named.backend, SqliteBackend | PgBackend | MysqlBackend>>();
  const sqliteOnly: SessionStore<'sqlite'> | undefined = store.dialect === 'sqlite' ? store : undefined;
  void sqliteOnly;
}

export async function literals(store: SessionStore): Promise<void> {
  assertType<Equal<SearchSort, 'relevance' | 'newest' | 'oldest'>>();
  await store.searchMessages('x', { sort: 'newest' });
  await store.searchMessages('x', { sort: 'relevance' });
  await store.searchMessages('x', { sort: null });
  // @ts-expect-error a typo in sort is a compile error (and a ValidationError at runtime)
  await store.searchMessages('x', { sort: 'newst' });
  const fromCli: string = 'oldest';
  // @ts-expect-error an unchecked string is not a SearchSort
  await store.searchMessages('x', { sort: fromCli });

  assertType<Equal<HandoffStatus, 'pending' | 'running' | 'completed' | 'failed'>>();
  const handoff = await store.getHandoffState('s');
  if (handoff?.state === 'running') assertType<Equal<typeof handoff.state, 'running'>>();
  // @ts-expect-error 'done' is not a handoff state
  if (handoff?.state === 'done') return;
  const row: SessionRow | null = await store.getSession('s');
  assertType<Equal<NonNullable<SessionRow['handoffState']>, HandoffStatus>>();
  void row;

  // Roles and managed modes are open (Hermes stores any string) but offer the known values.
  const role: HermesRole = 'assistant';
  const custom: HermesRole = 'critic';
  await store.appendMessage('s', role, 'hi');
  await store.appendMessage('s', custom, 'hi');
  const mode: TelegramManagedMode = 'restored';
  await store.bindTelegramTopic({
    chatId: 1,
    threadId: 2,
    userId: 3,
    sessionKey: 'k',
    sessionId: 's',
    managedMode: mode,
  });
  const binding = await store.getTelegramTopicBinding({ chatId: 1, threadId: 2 });
  const managed: string | undefined = binding?.managedMode;
  void managed;
}

export async function repositories(store: SessionStore): Promise<void> {
  // The repositories take the facade's input types (validated the same way).
  await store.messages.append('s', 'user', [{ type: 'text', text: 'hi' }], { toolCalls: [{ id: 'c1' }] });
  await store.messages.append('s', 'user');
  await store.sessions.create('s', 'cli', { modelConfig: { temperature: 0 } });
  await store.sessions.updateTokenCounts('s', { inputTokens: 3 });
  await store.telegramTopics.enable({ chatId: 1, userId: 2 });
  // @ts-expect-error unknown option keys are refused by the type too
  await store.sessions.create('s', 'cli', { bogus: 1 });
}

export function decoders(
  sqliteRow: typeof sqliteSchema.messages.$inferSelect,
  pgRow: typeof pgSchema.messages.$inferSelect,
): MessageRow[] {
  // @ts-expect-error a Postgres row is not a SQLite row (content_json vs the marker)
  decodeSqliteMessageRow(pgRow);
  return [decodeSqliteMessageRow(sqliteRow), decodePgMessageRow(pgRow)];
}
