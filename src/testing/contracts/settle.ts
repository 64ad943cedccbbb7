/**
 * Contract: every call settles, and settles truthfully. close() with calls in flight lets each one settle
 * before it resolves (a resolved write is in the database, a rejected one is not), and refuses calls made
 * after it began; un-awaited writes to one session commit in call order; a delete racing appends never
 * surfaces as a raw foreign-key error and never leaves a message without its session.
 */
import { describe, expect, it } from 'vitest';
import { type SessionStore, SessionNotFoundError, StoreClosedError } from '../../index.js';
import type { ContractHarness } from '../harness.js';

type Outcome<T> = { state: 'pending' } | { state: 'resolved'; value: T } | { state: 'rejected'; error: unknown };

/** Record how a promise settles, without awaiting it. */
function watch<T>(promise: Promise<T>): { outcome: Outcome<T> } {
  const watched: { outcome: Outcome<T> } = { outcome: { state: 'pending' } };
  promise.then(
    (value) => (watched.outcome = { state: 'resolved', value }),
    (error: unknown) => (watched.outcome = { state: 'rejected', error }),
  );
  return watched;
}

const resolvedValue = <T>(w: { outcome: Outcome<T> }): T | undefined =>
  w.outcome.state === 'resolved' ? w.outcome.value : undefined;

// size: one describe block of the contract, each `it` one rule of the spec; splitting it would scatter the spec.
export function settleContract(h: ContractHarness): void {
  describe('every call settles', () => {
    const reopenSkip = h.skips?.reopen;
    // Without search (a backend under construction) the searches of the mix are reads of another kind.
    const searchOrRead = (store: SessionStore): Promise<unknown> =>
      h.skips?.search === undefined ? store.searchMessages('hello') : store.getMessagesAsConversation('s');

    it(`close() settles every call already made (resolved ones written, rejected ones not) and refuses later calls${reopenSkip ? ` (rows not checked after close: ${reopenSkip})` : ''}`, async () => {
      const url = reopenSkip === undefined ? await h.freshUrl() : undefined;
      const store = url ? await h.openAt(url) : await h.open();
      await store.createSession('s', 'cli');
      await store.createSession('t', 'cli');
      for (let i = 0; i < 3; i++) await store.appendMessage('s', 'user', `seed hello ${i}`);

      const appends = Array.from({ length: 30 }, (_, i) => watch(store.appendMessage('s', 'user', `in flight ${i}`)));
      const tokens = Array.from({ length: 5 }, () => watch(store.updateTokenCounts('t', { inputTokens: 1 })));
      const titles = Array.from({ length: 3 }, (_, i) => watch(store.setSessionTitle('t', `title ${i}`)));
      const creates = Array.from({ length: 5 }, (_, i) => watch(store.createSession(`new-${i}`, 'cli')));
      const searches = Array.from({ length: 3 }, () => watch(searchOrRead(store)));
      const reads = Array.from({ length: 3 }, () => watch(store.getMessages('s')));
      const all = [...appends, ...tokens, ...titles, ...creates, ...searches, ...reads];

      const settledOrder: string[] = [];
      const closing = store.close();
      void closing.then(() => settledOrder.push('close'));
      const lateCalls: Promise<unknown>[] = [
        store.appendMessage('s', 'user', 'too late'),
        store.updateTokenCounts('t', { inputTokens: 100 }),
        store.getMessages('s'),
        searchOrRead(store),
      ];
      const late = lateCalls.map((p, i) => {
        void p.catch(() => settledOrder.push(`late ${i}`));
        return watch(p);
      });
      await closing;

      // Nothing is left pending once close() has resolved; the late calls were refused before it did.
      expect(all.filter((w) => w.outcome.state === 'pending')).toHaveLength(0);
      for (const w of all) {
        if (w.outcome.state === 'rejected') expect(w.outcome.error).toBeInstanceOf(StoreClosedError);
      }
      for (const w of late) {
        expect(w.outcome.state).toBe('rejected');
        expect((w.outcome as { error: unknown }).error).toBeInstanceOf(StoreClosedError);
      }
      expect(settledOrder.indexOf('close')).toBe(settledOrder.length - 1);
      for (const w of [...searches, ...reads]) expect(w.outcome.state).toBe('resolved');
      for (const w of reads) expect(resolvedValue(w)!.length).toBeGreaterThanOrEqual(3);

      // A second close, and a third, resolve too.
      await store.close();
      await store.close();

      if (!url) return;
      const again = await h.openAt(url);
      try {
        const expected = [0, 1, 2].map((i) => `seed hello ${i}`);
        const expectedIds: number[] = [];
        appends.forEach((w, i) => {
          const id = resolvedValue(w);
          if (id !== undefined) {
            expected.push(`in flight ${i}`);
            expectedIds.push(id);
          }
        });
        const stored = await again.getMessages('s');
        expect(stored.map((m) => m.content)).toEqual(expected);
        expect(stored.slice(3).map((m) => m.id)).toEqual(expectedIds);
        expect((await again.getSession('s'))!.messageCount).toBe(expected.length);
        const t = (await again.getSession('t'))!;
        expect(t.inputTokens).toBe(tokens.filter((w) => w.outcome.state === 'resolved').length);
        const lastTitle = titles
          .map((w, i) => (w.outcome.state === 'resolved' ? `title ${i}` : null))
          .filter((x) => x !== null)
          .at(-1);
        expect(t.title).toBe(lastTitle ?? null);
        for (const [i, w] of creates.entries()) {
          expect((await again.getSession(`new-${i}`)) !== null, `new-${i}`).toBe(w.outcome.state === 'resolved');
        }
      } finally {
        await again.close();
      }
    });

    it('close() lets calls made on the repositories (store.search, store.messages, …) settle for their own reasons', async () => {
      const store = await h.open();
      await store.createSession('s', 'cli');
      for (let i = 0; i < 3; i++) await store.appendMessage('s', 'user', `seed hello ${i}`);
      const searching = h.skips?.search === undefined;
      // Each repository call takes several steps (reads, a search's catch-up and context reads).
      const searches = searching
        ? [watch(store.search.searchMessages('hello')), watch(store.search.searchMessages('"seed hello"'))]
        : [];
      const missing = watch(store.sessions.get('missing'));
      const calls: { outcome: Outcome<unknown> }[] = [
        ...searches,
        watch(store.messages.conversation('s', true)),
        watch(store.maintenance.stats()),
        watch(store.exports.exportSession('s')),
        watch(store.messages.append('s', 'user', 'appended through the repository')),
        missing,
      ];
      const closing = store.close();
      const late = watch(store.search.searchMessages('hello'));
      await closing;
      await Promise.resolve();
      for (const w of calls) {
        expect(w.outcome.state === 'rejected' ? w.outcome.error : undefined).toBeUndefined();
        expect(w.outcome.state).toBe('resolved');
      }
      for (const w of searches) expect(resolvedValue(w)).toHaveLength(3);
      expect(resolvedValue(missing)).toBeNull();
      // Made once close() had begun: refused, whichever way it was made.
      expect(late.outcome.state).toBe('rejected');
      expect((late.outcome as { error: unknown }).error).toBeInstanceOf(StoreClosedError);
    });

    it('un-awaited writes to one session commit in call order', async () => {
      const store = await h.open();
      try {
        await store.createSession('s', 'cli');
        const contents: string[] = [];
        const ids: number[] = [];
        for (let round = 0; round < 3; round++) {
          const calls = Array.from({ length: 16 }, (_, i) => {
            contents.push(`round ${round} message ${i}`);
            return store.appendMessage('s', i % 2 ? 'assistant' : 'user', `round ${round} message ${i}`);
          });
          ids.push(...(await Promise.all(calls)));
        }
        expect(ids).toEqual([...ids].sort((a, b) => a - b));
        expect(new Set(ids).size).toBe(ids.length);
        const stored = await store.getMessages('s');
        expect(stored.map((m) => m.content)).toEqual(contents);
        expect(stored.map((m) => m.id)).toEqual(ids);

        // The last of several un-awaited title sets wins.
        await Promise.all(Array.from({ length: 8 }, (_, i) => store.setSessionTitle('s', `Title ${i}`)));
        expect(await store.getSessionTitle('s')).toBe('Title 7');
      } finally {
        await store.close();
      }
    });

    const shared = h.skips?.['multi-process'] === undefined;
    it(`a delete racing appends: each append commits and goes with its session, or rejects with SessionNotFoundError${shared ? ' (appends and deletes from two stores)' : ''}`, async () => {
      const url = shared ? await h.freshUrl() : undefined;
      const appender = url ? await h.openAt(url) : await h.open();
      // Where the database can be shared, the delete comes from a second store (on Postgres: another pool).
      const deleter: SessionStore = url ? await h.openAt(url) : appender;
      try {
        for (let round = 0; round < 50; round++) {
          const id = `race-${round}`;
          await appender.createSession(id, 'cli');
          const before = Array.from({ length: 4 }, (_, i) => appender.appendMessage(id, 'user', `before ${i}`));
          const deletion = deleter.deleteSession(id);
          const after = Array.from({ length: 2 }, (_, i) => appender.appendMessage(id, 'user', `after ${i}`));
          const results = await Promise.allSettled([...before, ...after]);
          expect(await deletion).toBe(true);
          for (const r of results) {
            if (r.status === 'rejected') {
              expect(r.reason).toBeInstanceOf(SessionNotFoundError);
            }
          }
          expect(await appender.getSession(id)).toBeNull();
          expect(await appender.messageCount({ sessionId: id })).toBe(0);
        }
        // No message outlived its session.
        expect(await appender.messageCount()).toBe(0);
        expect(await appender.sessionCount()).toBe(0);
      } finally {
        if (deleter !== appender) await deleter.close();
        await appender.close();
      }
    });

    it(`a prune racing appends to the sessions it prunes: the same${shared ? ' (from two stores)' : ''}`, async () => {
      const url = shared ? await h.freshUrl() : undefined;
      // The sessions are created and ended 100 days back, so they are old enough to prune; the prune runs now.
      let daysBack = 100;
      const clock = () => Date.now() / 1000 - daysBack * 86400;
      const appender = url ? await h.openAt(url, { clock }) : await h.open({ clock });
      const pruner: SessionStore = url ? await h.openAt(url) : appender;
      try {
        for (let round = 0; round < 10; round++) {
          const id = `old-${round}`;
          await appender.createSession(id, 'cli');
          await appender.endSession(id, 'done');
          const before = Array.from({ length: 4 }, (_, i) => appender.appendMessage(id, 'user', `before ${i}`));
          daysBack = 0;
          const pruning = pruner.pruneSessions({ olderThanDays: 90 });
          daysBack = 100;
          const after = Array.from({ length: 2 }, (_, i) => appender.appendMessage(id, 'user', `after ${i}`));
          const results = await Promise.allSettled([...before, ...after]);
          expect(await pruning).toBe(1);
          for (const r of results) if (r.status === 'rejected') expect(r.reason).toBeInstanceOf(SessionNotFoundError);
          expect(await appender.getSession(id)).toBeNull();
        }
        expect(await appender.messageCount()).toBe(0);
      } finally {
        if (pruner !== appender) await pruner.close();
        await appender.close();
      }
    });
  });
}
