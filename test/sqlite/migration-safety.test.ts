/**
 * SQLite migrations must never lose rows: drizzle-kit's table rebuilds (CREATE __new_x, copy, DROP, RENAME)
 * fire ON DELETE CASCADE when foreign keys are on, and `PRAGMA foreign_keys=OFF` inside a migration is
 * ignored because it runs in a transaction. Our migrator switches foreign keys off around the run and
 * checks them before committing.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { MigrationError, type SqliteBackend, openStore } from '../../src/index.js';
import { sqliteFileHarness } from '../backends.js';
import { folderWith, latestWhen } from '../helpers/migration-folders.js';

const h = sqliteFileHarness();
afterAll(() => h.cleanup());

/** A store holding a session, its message and a Telegram binding (the table that cascades). */
async function seeded(url: string) {
  const store = await openStore(url);
  const { client } = store.backend as SqliteBackend;
  client.exec(`
    INSERT INTO sessions (id, source, started_at, title) VALUES ('s1', 'telegram', 1, 'kept');
    INSERT INTO messages (session_id, role, content, timestamp) VALUES ('s1', 'user', 'hello', 2);
    INSERT INTO telegram_dm_topic_bindings (chat_id, thread_id, user_id, session_key, session_id, linked_at, updated_at)
      VALUES ('c', 't', 'u', 'k', 's1', 3, 3);`);
  const sessionsDdl = client.prepare("SELECT sql FROM sqlite_master WHERE name = 'sessions'").pluck().get() as string;
  // The triggers on sessions (session activity), which a rebuild drops with the table.
  const sessionTriggers = client
    .prepare("SELECT sql FROM sqlite_master WHERE type = 'trigger' AND tbl_name = 'sessions'")
    .pluck()
    .all() as string[];
  await store.close();
  return { ddl: sessionsDdl, sessionTriggers };
}

/** drizzle-kit's rebuild of sessions (CREATE __new, copy, DROP, RENAME), then `after`. */
const rebuildSessions = (ddl: string, after: string[]) =>
  [
    'PRAGMA foreign_keys=OFF;',
    `${ddl.replace(/^CREATE TABLE [`"]?sessions[`"]?/, 'CREATE TABLE `__new_sessions`')};`,
    'INSERT INTO `__new_sessions` SELECT * FROM `sessions`;',
    'DROP TABLE `sessions`;',
    'ALTER TABLE `__new_sessions` RENAME TO `sessions`;',
    ...after.map((t) => `${t};`),
    'PRAGMA foreign_keys=ON;',
  ].join('\n--> statement-breakpoint\n');

const counts = (client: SqliteBackend['client']) => ({
  sessions: client.prepare('SELECT COUNT(*) FROM sessions').pluck().get(),
  messages: client.prepare('SELECT COUNT(*) FROM messages').pluck().get(),
  bindings: client.prepare('SELECT COUNT(*) FROM telegram_dm_topic_bindings').pluck().get(),
});

describe('SQLite migration safety', () => {
  it('keeps every row through a drizzle-kit style rebuild of the sessions table', async () => {
    const url = await h.freshUrl();
    const { ddl, sessionTriggers } = await seeded(url);
    expect(sessionTriggers.length).toBeGreaterThan(0);
    // As a migration rebuilding sessions must: the triggers on sessions created again after the rebuild.
    const rebuild = rebuildSessions(ddl, sessionTriggers);
    const store = await openStore(url, {
      migrationsFolder: folderWith('sqlite', [
        { tag: '9000_rebuild_sessions', when: latestWhen('sqlite') + 1, sql: rebuild },
      ]),
    });
    try {
      const { client } = store.backend as SqliteBackend;
      expect(counts(client)).toEqual({ sessions: 1, messages: 1, bindings: 1 });
      expect(client.pragma('foreign_keys', { simple: true })).toBe(1);
      expect(client.pragma('legacy_alter_table', { simple: true })).toBe(0);
      // The triggers on messages still work against the new table: an append moves the session's activity.
      const id = await store.appendMessage('s1', 'user', 'after the rebuild');
      const row = client.prepare('SELECT last_message_at, chain_last_active FROM sessions WHERE id = ?').get('s1');
      const ts = client.prepare('SELECT timestamp FROM messages WHERE id = ?').pluck().get(id);
      expect(row).toEqual({ last_message_at: ts, chain_last_active: ts });
    } finally {
      await store.close();
    }
  });

  it('refuses, and rolls back, a rebuild that drops the triggers of the rebuilt table without creating them again', async () => {
    const url = await h.freshUrl();
    const { ddl, sessionTriggers } = await seeded(url);
    const forgetful = folderWith('sqlite', [
      { tag: '9000_rebuild_sessions', when: latestWhen('sqlite') + 1, sql: rebuildSessions(ddl, []) },
    ]);
    const error = await openStore(url, { migrationsFolder: forgetful }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(MigrationError);
    expect((error as MigrationError).reason).toBe('TRIGGERS_LOST');
    expect((error as MigrationError).message).toContain('session_activity_');
    const store = await openStore(url);
    try {
      const { client } = store.backend as SqliteBackend;
      expect(counts(client)).toEqual({ sessions: 1, messages: 1, bindings: 1 });
      const triggers = client
        .prepare("SELECT sql FROM sqlite_master WHERE type = 'trigger' AND tbl_name = 'sessions'")
        .pluck()
        .all();
      expect(triggers).toEqual(sessionTriggers);
    } finally {
      await store.close();
    }
  });

  it('rolls back a migration that would leave rows pointing at nothing', async () => {
    const url = await h.freshUrl();
    await seeded(url);
    const dangling = folderWith('sqlite', [
      { tag: '9000_delete_referenced', when: latestWhen('sqlite') + 1, sql: "DELETE FROM sessions WHERE id = 's1';" },
    ]);
    const error = await openStore(url, { migrationsFolder: dangling }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(MigrationError);
    expect((error as MigrationError).reason).toBe('FOREIGN_KEY_VIOLATION');
    const store = await openStore(url);
    try {
      expect(counts((store.backend as SqliteBackend).client)).toEqual({ sessions: 1, messages: 1, bindings: 1 });
      expect((await store.migrationStatus()).pending).toEqual([]);
    } finally {
      await store.close();
    }
  });
});
