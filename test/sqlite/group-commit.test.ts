/**
 * Group commit on SQLite: appends requested together share one transaction, yet each keeps its own
 * contract: its promise settles only after its row is committed, and a bad call fails alone.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { SessionNotFoundError, type SqliteBackend, TitleConflictError, openStore } from '../../src/index.js';
import { sqliteFileHarness } from '../backends.js';

const h = sqliteFileHarness();
afterAll(() => h.cleanup());

describe('SQLite group commit', () => {
  it('commits 16 concurrent appends in shared transactions; an unknown session and a taken title fail alone', async () => {
    const url = await h.freshUrl();
    const store = await openStore(url);
    const other = await openStore(url); // a second connection sees only what is committed
    try {
      await store.createSession('a', 'cli');
      await store.createSession('b', 'cli');
      await store.setSessionTitle('b', 'taken');
      // Commits show in the WAL: each one appends the pages it changed. Measure 16 appends made one after
      // another, then 16 made together.
      const client = (store.backend as SqliteBackend).client;
      const walFrames = () => (client.pragma('wal_checkpoint(PASSIVE)') as Array<{ log: number }>)[0]!.log;
      client.pragma('wal_checkpoint(TRUNCATE)');
      for (let i = 0; i < 16; i++) await store.appendMessage('b', 'user', `sequential ${i}`);
      const sequentialFrames = walFrames();
      client.pragma('wal_checkpoint(TRUNCATE)');
      const calls = [
        ...Array.from({ length: 16 }, (_, i) => store.appendMessage('a', 'user', `concurrent ${i}`)),
        store.appendMessage('missing', 'user', 'nowhere'),
        store.setSessionTitle('a', 'taken'),
      ];
      const settled = await Promise.allSettled(calls);
      const togetherFrames = walFrames();
      expect(togetherFrames).toBeLessThan(sequentialFrames / 4);
      const ids = settled.slice(0, 16).map((r) => (r.status === 'fulfilled' ? (r.value as number) : -1));
      expect(ids.every((id) => id > 0)).toBe(true);
      expect(new Set(ids).size).toBe(16);
      expect(settled[16]).toMatchObject({ status: 'rejected', reason: expect.any(SessionNotFoundError) });
      expect(settled[17]).toMatchObject({ status: 'rejected', reason: expect.any(TitleConflictError) });
      // Resolved means committed: another connection reads every row, in call order.
      const seen = await other.getMessages('a');
      expect(seen.map((m) => m.content)).toEqual(Array.from({ length: 16 }, (_, i) => `concurrent ${i}`));
      expect(seen.map((m) => m.id)).toEqual(ids);
      expect((await other.getSession('a'))!.messageCount).toBe(16);
      expect(await other.getSessionTitle('a')).toBeNull();
      expect(await other.getSession('missing')).toBeNull();
    } finally {
      await other.close();
      await store.close();
    }
  });

  it('finishes requested writes before close() returns', async () => {
    const url = await h.freshUrl();
    const store = await openStore(url);
    await store.createSession('a', 'cli');
    const pending = Array.from({ length: 5 }, (_, i) => store.appendMessage('a', 'user', `late ${i}`));
    await store.close();
    expect((await Promise.all(pending)).every((id) => id > 0)).toBe(true);
    const again = await openStore(url);
    expect(await again.messageCount()).toBe(5);
    await again.close();
  });
});
