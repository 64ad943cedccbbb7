/** Contract: the handoff state machine (spec §7, §12.6). */
import { describe, expect, it } from 'vitest';
import type { StoreFixture } from '../fixture.js';

export function handoffsContract(f: StoreFixture): void {
  describe('handoffs', () => {
    it('H2/H10 requests a handoff; a session without one reports all-null; an unknown one null', async () => {
      await f.store.createSession('sess-1', 'cli');
      expect(await f.store.getHandoffState('sess-1')).toEqual({ state: null, platform: null, error: null });
      expect(await f.store.requestHandoff('sess-1', 'telegram')).toBe(true);
      expect(await f.store.getHandoffState('sess-1')).toEqual({ state: 'pending', platform: 'telegram', error: null });
      expect(await f.store.getHandoffState('does-not-exist')).toBeNull();
      expect(await f.store.requestHandoff('does-not-exist', 'telegram')).toBe(false);
    });

    it('H3 refuses a new request while one is pending or running', async () => {
      await f.store.createSession('sess-2', 'cli');
      await f.store.requestHandoff('sess-2', 'telegram');
      expect(await f.store.requestHandoff('sess-2', 'discord')).toBe(false);
      expect(await f.store.claimHandoff('sess-2')).toBe(true);
      expect(await f.store.requestHandoff('sess-2', 'discord')).toBe(false);
      expect((await f.store.getHandoffState('sess-2'))!.platform).toBe('telegram');
    });

    it('H4/H7 re-requests after a failure, clearing the error, then completes', async () => {
      await f.store.createSession('sess-3', 'cli');
      await f.store.requestHandoff('sess-3', 'telegram');
      await f.store.claimHandoff('sess-3');
      await f.store.failHandoff('sess-3', 'earlier failure');
      expect(await f.store.requestHandoff('sess-3', 'discord')).toBe(true);
      expect(await f.store.getHandoffState('sess-3')).toEqual({ state: 'pending', platform: 'discord', error: null });
      expect(await f.store.claimHandoff('sess-3')).toBe(true);
      await f.store.completeHandoff('sess-3');
      expect(await f.store.getHandoffState('sess-3')).toEqual({ state: 'completed', platform: 'discord', error: null });
      expect(await f.store.requestHandoff('sess-3', 'slack')).toBe(true);
    });

    it('H5 lists only pending handoffs, oldest first', async () => {
      for (const id of ['a', 'b', 'c', 'd']) {
        await f.store.createSession(id, 'cli');
        await f.store.requestHandoff(id, 'telegram');
      }
      await f.store.claimHandoff('c');
      await f.store.claimHandoff('d');
      await f.store.completeHandoff('d');
      expect((await f.store.listPendingHandoffs()).map((s) => s.id)).toEqual(['a', 'b']);
    });

    it('H6 claims once', async () => {
      await f.store.createSession('s', 'cli');
      await f.store.requestHandoff('s', 'telegram');
      expect(await f.store.claimHandoff('s')).toBe(true);
      expect(await f.store.claimHandoff('s')).toBe(false);
      expect((await f.store.getHandoffState('s'))!.state).toBe('running');
      expect(await f.store.claimHandoff('never-requested')).toBe(false);
    });

    it('H8/H9 records the failure, cut to 500 characters', async () => {
      await f.store.createSession('s', 'cli');
      await f.store.requestHandoff('s', 'telegram');
      await f.store.claimHandoff('s');
      await f.store.failHandoff('s', 'no home channel for telegram');
      expect(await f.store.getHandoffState('s')).toEqual({
        state: 'failed',
        platform: 'telegram',
        error: 'no home channel for telegram',
      });
      await f.store.failHandoff('s', '記'.repeat(1000));
      expect([...(await f.store.getHandoffState('s'))!.error!]).toHaveLength(500);
    });

    it('H11 runs the whole flow with the transcript intact', async () => {
      await f.store.createSession('flow', 'cli');
      await f.store.setSessionTitle('flow', 'Handoff me');
      await f.store.appendMessage('flow', 'user', 'hello');
      await f.store.appendMessage('flow', 'assistant', 'hi');
      await f.store.requestHandoff('flow', 'telegram');
      expect((await f.store.listPendingHandoffs()).map((s) => [s.id, s.title])).toEqual([['flow', 'Handoff me']]);
      expect(await f.store.claimHandoff('flow')).toBe(true);
      expect((await f.store.getMessages('flow')).map((m) => m.role)).toEqual(['user', 'assistant']);
      await f.store.completeHandoff('flow');
      expect((await f.store.getHandoffState('flow'))!.state).toBe('completed');
      expect(await f.store.listPendingHandoffs()).toEqual([]);
    });
  });
}
