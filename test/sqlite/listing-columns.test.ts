/**
 * listSessionsRich reads its page as arrays of values and finds each column by the name SQLite gives it
 * (`s.*` is expanded when the statement is prepared). The statement is cached: when the table gains a column
 * (another process's ALTER TABLE), SQLite prepares it again with one more column, and the listing must follow
 * the new positions instead of reading each value from its old place.
 */
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { sqliteFileHarness } from '../backends.js';

const h = sqliteFileHarness();
afterAll(() => h.cleanup());

describe('listSessionsRich after the sessions table gains a column', () => {
  it('reads every value from its own column before and after', async () => {
    const url = await h.freshUrl();
    const store = await h.openAt(url);
    try {
      await store.createSession('root', 'cli', { model: 'm-1' });
      await store.appendMessage('root', 'user', 'first question\nof the root');
      await store.endSession('root', 'compression');
      await store.createSession('tip', 'cli', { parentSessionId: 'root', model: 'm-2' });
      await store.appendMessage('tip', 'user', 'the continuation');
      await store.createSession('plain', 'telegram');
      await store.appendMessage('plain', 'user', 'hello there');

      const before = await store.listSessionsRich({ limit: 10 });
      expect(before.map((r) => [r.id, r.source, r.preview])).toEqual([
        ['plain', 'telegram', 'hello there'],
        ['tip', 'cli', 'the continuation'],
      ]);

      const other = new Database(url.slice('sqlite:'.length));
      try {
        other.exec("ALTER TABLE sessions ADD COLUMN app_note TEXT DEFAULT 'not a preview'");
      } finally {
        other.close();
      }
      expect(await store.listSessionsRich({ limit: 10 })).toEqual(before);
    } finally {
      await store.close();
    }
  });
});
