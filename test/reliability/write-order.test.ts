/**
 * Writes commit in the order they were requested, whichever thread runs them. On an SQLite file,
 * deleteSession, clearMessages, prune batches and import pages run on the maintenance worker; an append
 * requested after one of them must not be undone by it. Each sequence runs 50 rounds with the worker
 * already started (one earlier delete), on every backend: a write that resolved is never lost to a delete
 * requested before it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type SessionStore, SessionNotFoundError } from '../../src/index.js';
import {
  type Harness,
  pgliteHarness,
  postgresHarness,
  reportAvailability,
  sqliteFileHarness,
  sqliteMemoryHarness,
  mariadbHarness,
} from '../backends.js';

const ROUNDS = 50;
const harnesses: Harness[] = [
  sqliteFileHarness(),
  sqliteMemoryHarness(),
  pgliteHarness(),
  await postgresHarness(),
  await mariadbHarness(),
];

for (const h of harnesses) {
  describe.runIf(reportAvailability(h))(`${h.name}: a delete requested before a write never undoes it`, () => {
    let store: SessionStore;
    // Every session starts one second after the last: the prune's cutoff (now) is past all of them.
    let clock = 1_700_000_000;
    beforeAll(async () => {
      store = await h.open({ clock: () => clock++ });
      // Warm the worker (on an SQLite file): its first job starts the thread, which hid the race.
      await store.createSession('warm', 'cli');
      await store.deleteSession('warm');
    });
    afterAll(async () => {
      await store?.close();
      await h.cleanup();
    });

    it('clearMessages (not awaited), then appendMessage: the append is kept', async () => {
      const lost: number[] = [];
      for (let r = 0; r < ROUNDS; r++) {
        const s = `clear-${r}`;
        await store.createSession(s, 'cli');
        const before = await store.appendMessage(s, 'user', 'cleared');
        const clear = store.clearMessages(s);
        const id = await store.appendMessage(s, 'user', 'kept');
        await clear;
        const ids = (await store.getMessages(s)).map((m) => m.id);
        if (!ids.includes(id) || ids.includes(before)) lost.push(r);
        expect((await store.getSession(s))?.messageCount).toBe(ids.length);
      }
      expect(lost).toEqual([]);
    });

    it('deleteSession (not awaited), then createSession and appendMessage: both are kept', async () => {
      const lost: number[] = [];
      for (let r = 0; r < ROUNDS; r++) {
        const s = `delete-${r}`;
        await store.createSession(s, 'cli', { model: 'old' });
        await store.appendMessage(s, 'user', 'deleted');
        const deleted = store.deleteSession(s);
        await store.createSession(s, 'cli', { model: 'new' });
        const id = await store.appendMessage(s, 'user', 'kept');
        expect(await deleted).toBe(true);
        const session = await store.getSession(s);
        const contents = (await store.getMessages(s)).map((m) => [m.id, m.content]);
        if (session?.model !== 'new' || JSON.stringify(contents) !== JSON.stringify([[id, 'kept']])) lost.push(r);
      }
      expect(lost).toEqual([]);
    });

    it('pruneSessions (not awaited), then appends: an ended session is gone first, a live one keeps every append', async () => {
      const lost: number[] = [];
      await store.createSession('live', 'cli');
      const kept: number[] = [];
      for (let r = 0; r < ROUNDS; r++) {
        const s = `pruned-${r}`;
        await store.createSession(s, 'cli');
        await store.appendMessage(s, 'user', 'old');
        await store.endSession(s, 'done');
        const prune = store.pruneSessions({ olderThanDays: 0 });
        const late = store.appendMessage(s, 'user', 'late').then(
          (id) => id,
          (error: unknown) => {
            if (error instanceof SessionNotFoundError) return null;
            throw error;
          },
        );
        kept.push(await store.appendMessage('live', 'user', `live ${r}`));
        expect(await prune).toBe(1);
        // Requested after the prune: it finds no session. Had it been told its message is written, the
        // message must be there.
        const id = await late;
        if (id !== null) lost.push(r);
        if (id !== null && !(await store.getMessages(s)).some((m) => m.id === id)) lost.push(-r);
      }
      expect(lost).toEqual([]);
      expect((await store.getMessages('live')).map((m) => m.id)).toEqual(kept);
      expect((await store.getSession('live'))?.messageCount).toBe(ROUNDS);
    });

    it('a prune of several batches never deletes a session written between two of its batches', async () => {
      // More ended sessions than one batch holds (500): the last ones go in a later batch.
      const ids = Array.from({ length: 600 }, (_, i) => `batch-${String(i).padStart(3, '0')}`);
      for (const id of ids) await store.createSession(id, 'cli');
      await Promise.all(ids.map((id) => store.endSession(id, 'done')));
      const prune = store.pruneSessions({ olderThanDays: 0 });
      const late = store.appendMessage('batch-599', 'user', 'between batches').catch((error: unknown) => {
        if (error instanceof SessionNotFoundError) return null;
        throw error;
      });
      const pruned = await prune;
      const id = await late;
      if (id === null) {
        expect(pruned).toBe(600);
      } else {
        // Written after the first batch: the session and its message stay, for the next prune.
        expect(pruned).toBe(599);
        expect((await store.getMessages('batch-599')).map((m) => m.id)).toEqual([id]);
      }
    });
  });
}
