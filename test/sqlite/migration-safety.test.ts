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
  await store.close();
  return sessionsDdl;
}

const counts = (client: SqliteBackend['client']) => ({
  sessions: client.prepare('SELECT COUNT(*) FROM sessions').pluck().get(),
  messages: client.prepare('SELECT COUNT(*) FROM messages').pluck().get(),
  bindings: client.prepare('SELECT COUNT(*) FROM telegram_dm_topic_bindings').pluck().get(),
});

describe('SQLite migration safety', () => {
  it('keeps every row through a drizzle-kit style rebuild of the sessions table', async () => {
    const url = await h.freshUrl();
    const ddl = await seeded(url);
    const rebuild = [
      'PRAGMA foreign_keys=OFF;',
      `${ddl.replace(/^CREATE TABLE [`"]?sessions[`"]?/, 'CREATE TABLE `__new_sessions`')};`,
      'INSERT INTO `__new_sessions` SELECT * FROM `sessions`;',
      'DROP TABLE `sessions`;',
      'ALTER TABLE `__new_sessions` RENAME TO `sessions`;',
      'PRAGMA foreign_keys=ON;',
    ].join('\n--> statement-breakpoint\n');
    const store = await openStore(url, {
      migrationsFolder: folderWith('sqlite', [
        { tag: '9000_rebuild_sessions', when: latestWhen('sqlite') + 1, sql: rebuild },
      ]),
    });
    try {
      const { client } = store.backend as SqliteBackend;
      expect(counts(client)).toEqual({ sessions: 1, messages: 1, bindings: 1 });
      expect(client.pragma('foreign_keys', { simple: true })).toBe(1);
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
