/** Contract: sessions, token counters, deletes and prunes, maintenance, meta, counts, export (spec §2, §6, §9, §12.1, §12.5). */
import { describe, expect, it } from 'vitest';
import { SessionNotFoundError, ValidationError } from '../../index.js';
import type { StoreFixture } from '../fixture.js';

const DAY = 86400;

// size: one describe block of the contract, each `it` one rule of the spec; splitting it would scatter the spec.
export function sessionsContract(f: StoreFixture): void {
  describe('sessions', () => {
    it('S1 creates a session and returns its id', async () => {
      expect(await f.store.createSession('s1', 'cli', { model: 'test-model' })).toBe('s1');
      const s = await f.store.getSession('s1');
      expect(s).toMatchObject({ id: 's1', source: 'cli', model: 'test-model', endedAt: null, messageCount: 0 });
      expect(typeof s!.startedAt).toBe('number');
    });

    it('S2 returns null for an unknown session', async () => {
      expect(await f.store.getSession('nonexistent')).toBeNull();
    });

    it('S3 ends a session with a time and a reason', async () => {
      await f.store.createSession('s1', 'cli');
      await f.store.endSession('s1', 'user_exit');
      const s = await f.store.getSession('s1');
      expect(typeof s!.endedAt).toBe('number');
      expect(s!.endReason).toBe('user_exit');
    });

    it('S4 keeps the first end: a second end changes neither reason nor time', async () => {
      await f.store.createSession('s1', 'cli');
      await f.store.endSession('s1', 'compression');
      const first = await f.store.getSession('s1');
      f.clock.advance(10);
      await f.store.endSession('s1', 'resumed_other');
      const second = await f.store.getSession('s1');
      expect(second!.endReason).toBe('compression');
      expect(second!.endedAt).toBe(first!.endedAt);
    });

    it('S5 reopens an ended session so that it can be ended again', async () => {
      await f.store.createSession('s1', 'cli');
      await f.store.endSession('s1', 'compression');
      await f.store.reopenSession('s1');
      expect(await f.store.getSession('s1')).toMatchObject({ endedAt: null, endReason: null });
      await f.store.endSession('s1', 'user_exit');
      expect((await f.store.getSession('s1'))!.endReason).toBe('user_exit');
    });

    it('end, reopen and system prompt on an unknown session are silent no-ops', async () => {
      await f.store.endSession('ghost', 'x');
      await f.store.reopenSession('ghost');
      await f.store.updateSystemPrompt('ghost', 'p');
      expect(await f.store.sessionCount()).toBe(0);
    });

    it('S6 stores the system prompt verbatim', async () => {
      await f.store.createSession('s1', 'cli');
      await f.store.updateSystemPrompt('s1', 'You are a helpful assistant.');
      expect((await f.store.getSession('s1'))!.systemPrompt).toBe('You are a helpful assistant.');
    });

    it('S12 records the parent; S13 a second create is a no-op (first write wins)', async () => {
      await f.store.createSession('parent', 'cli');
      await f.store.createSession('child', 'cli', { parentSessionId: 'parent' });
      expect((await f.store.getSession('child'))!.parentSessionId).toBe('parent');
      await f.store.createSession('dup-1', 'cli', { model: 'm' });
      await f.store.createSession('dup-1', 'gateway', { model: 'm2' });
      expect(await f.store.getSession('dup-1')).toMatchObject({ source: 'cli', model: 'm' });
    });

    it('refuses a parent that does not exist, and writes nothing', async () => {
      const error = await f.store
        .createSession('orphan', 'cli', { parentSessionId: 'missing' })
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(SessionNotFoundError);
      expect((error as SessionNotFoundError).sessionId).toBe('missing');
      expect(await f.store.getSession('orphan')).toBeNull();
    });

    it('refuses a session as its own parent with a ValidationError, new or existing, and writes nothing', async () => {
      await f.store.createSession('exists', 'cli');
      const before = JSON.stringify(await f.store.exportAll());
      for (const call of [
        () => f.store.createSession('self', 'cli', { parentSessionId: 'self' }),
        () => f.store.ensureSession('self', 'cli', { parentSessionId: 'self' }),
        () => f.store.createSession('exists', 'cli', { parentSessionId: 'exists' }),
      ]) {
        const error = await call().catch((e: unknown) => e);
        expect(error).toBeInstanceOf(ValidationError);
        expect((error as ValidationError).field).toBe('options.parentSessionId');
        expect((error as Error).message).toMatch(/cannot be its own parent/);
      }
      expect(await f.store.getSession('self')).toBeNull();
      expect(JSON.stringify(await f.store.exportAll())).toBe(before);
    });

    it('stores model_config as JSON only when truthy ({} stores NULL)', async () => {
      await f.store.createSession('a', 'cli', { modelConfig: { temperature: 0.2, nested: ['x', 1.5, null, true] } });
      await f.store.createSession('b', 'cli', { modelConfig: {} });
      expect((await f.store.getSession('a'))!.modelConfig).toEqual({
        temperature: 0.2,
        nested: ['x', 1.5, null, true],
      });
      expect((await f.store.getSession('b'))!.modelConfig).toBeNull();
    });

    it('S14/S15 ensureSession creates a missing row and never overwrites one', async () => {
      await f.store.ensureSession('orphan-session', 'gateway', { model: 'test-model' });
      expect(await f.store.getSession('orphan-session')).toMatchObject({ source: 'gateway', model: 'test-model' });
      await f.store.createSession('existing', 'cli', { model: 'original-model' });
      await f.store.ensureSession('existing', 'gateway', { model: 'overwrite-model' });
      expect(await f.store.getSession('existing')).toMatchObject({ source: 'cli', model: 'original-model' });
      await f.store.ensureSession('defaulted');
      expect((await f.store.getSession('defaulted'))!.source).toBe('unknown');
    });

    it('S16 ensureSession makes a later append succeed', async () => {
      await f.store.ensureSession('late-session', 'gateway');
      await f.store.appendMessage('late-session', 'user', 'hello after lock');
      expect((await f.store.getMessages('late-session')).map((m) => m.content)).toEqual(['hello after lock']);
    });
  });

  describe('token counts', () => {
    it('S7 adds per-call deltas', async () => {
      await f.store.createSession('s1', 'cli');
      await f.store.updateTokenCounts('s1', { inputTokens: 200, outputTokens: 100 });
      await f.store.updateTokenCounts('s1', { inputTokens: 100, outputTokens: 50 });
      expect(await f.store.getSession('s1')).toMatchObject({ inputTokens: 300, outputTokens: 150 });
    });

    it('S8/S9 counts API calls, and absolute mode sets totals', async () => {
      await f.store.createSession('s1', 'cli');
      for (let i = 0; i < 3; i++)
        await f.store.updateTokenCounts('s1', { inputTokens: 100, outputTokens: 50, apiCallCount: 1 });
      expect((await f.store.getSession('s1'))!.apiCallCount).toBe(3);
      await f.store.updateTokenCounts('s1', { inputTokens: 300, outputTokens: 150, apiCallCount: 5, absolute: true });
      expect(await f.store.getSession('s1')).toMatchObject({ apiCallCount: 5, inputTokens: 300, outputTokens: 150 });
    });

    it('S10/S11 backfills the model but never overwrites it', async () => {
      await f.store.createSession('s1', 'telegram');
      await f.store.updateTokenCounts('s1', { inputTokens: 10, outputTokens: 5, model: 'openai/gpt-5.4' });
      expect((await f.store.getSession('s1'))!.model).toBe('openai/gpt-5.4');
      await f.store.createSession('s2', 'cli', { model: 'anthropic/claude-opus-4.6' });
      await f.store.updateTokenCounts('s2', { inputTokens: 10, outputTokens: 5, model: 'openai/gpt-5.4' });
      expect((await f.store.getSession('s2'))!.model).toBe('anthropic/claude-opus-4.6');
    });

    it('follows the incremental cost rules: estimated sums from 0, actual stays NULL until given', async () => {
      await f.store.createSession('s1', 'cli');
      await f.store.updateTokenCounts('s1', { estimatedCostUsd: 0.25 });
      await f.store.updateTokenCounts('s1', {});
      let s = await f.store.getSession('s1');
      expect(s).toMatchObject({ estimatedCostUsd: 0.25, actualCostUsd: null });
      await f.store.updateTokenCounts('s1', { actualCostUsd: 0.5, estimatedCostUsd: 0.25 });
      await f.store.updateTokenCounts('s1', { actualCostUsd: 0.25 });
      s = await f.store.getSession('s1');
      expect(s).toMatchObject({ estimatedCostUsd: 0.5, actualCostUsd: 0.75 });
    });

    it('follows the absolute cost rules: estimated resets to 0 when absent, actual is kept when absent', async () => {
      await f.store.createSession('s1', 'cli');
      await f.store.updateTokenCounts('s1', { estimatedCostUsd: 1, actualCostUsd: 2, apiCallCount: 4 });
      await f.store.updateTokenCounts('s1', { inputTokens: 7, absolute: true });
      expect(await f.store.getSession('s1')).toMatchObject({
        inputTokens: 7,
        estimatedCostUsd: 0,
        actualCostUsd: 2,
        apiCallCount: 0,
      });
      await f.store.updateTokenCounts('s1', { actualCostUsd: 3, estimatedCostUsd: 1.5, absolute: true });
      expect(await f.store.getSession('s1')).toMatchObject({ estimatedCostUsd: 1.5, actualCostUsd: 3 });
    });

    it('lets new cost status/source/pricing win and keeps the first billing values', async () => {
      await f.store.createSession('s1', 'cli');
      await f.store.updateTokenCounts('s1', {
        costStatus: 'estimated',
        costSource: 'pricing_table',
        pricingVersion: 'v1',
        billingProvider: 'openrouter',
        billingBaseUrl: 'https://a',
        billingMode: 'api_key',
      });
      await f.store.updateTokenCounts('s1', {
        costStatus: 'actual',
        pricingVersion: 'v2',
        billingProvider: 'openai',
        billingBaseUrl: 'https://b',
        billingMode: 'oauth',
      });
      expect(await f.store.getSession('s1')).toMatchObject({
        costStatus: 'actual',
        costSource: 'pricing_table',
        pricingVersion: 'v2',
        billingProvider: 'openrouter',
        billingBaseUrl: 'https://a',
        billingMode: 'api_key',
      });
    });

    it('creates a stub session (source unknown) for an unknown id, in the same call', async () => {
      await f.store.updateTokenCounts('stub', { inputTokens: 3, model: 'm' });
      expect(await f.store.getSession('stub')).toMatchObject({ source: 'unknown', model: 'm', inputTokens: 3 });
    });

    it('keeps token totals past 2^31 exactly', async () => {
      await f.store.createSession('big', 'cli');
      await f.store.updateTokenCounts('big', { inputTokens: 3_000_000_000, absolute: true });
      await f.store.updateTokenCounts('big', { inputTokens: 3_000_000_000 });
      expect((await f.store.getSession('big'))!.inputTokens).toBe(6_000_000_000);
    });

    it('keeps every session counter past 2^31, set, added or counted, exactly up to Number.MAX_SAFE_INTEGER', async () => {
      const big = {
        inputTokens: 3e9,
        outputTokens: 3e9,
        cacheReadTokens: 3e9,
        cacheWriteTokens: 3e9,
        reasoningTokens: 3e9,
        apiCallCount: 2 ** 31,
      };
      await f.store.updateTokenCounts('set', { ...big, absolute: true });
      expect(await f.store.getSession('set')).toMatchObject(big);
      // Incremental calls carry a counter past 2^31.
      for (let i = 0; i < 3; i++)
        await f.store.updateTokenCounts('added', { inputTokens: 2 ** 30, apiCallCount: 2 ** 30 });
      expect(await f.store.getSession('added')).toMatchObject({ inputTokens: 3 * 2 ** 30, apiCallCount: 3 * 2 ** 30 });
      await f.store.updateTokenCounts('max', {
        inputTokens: Number.MAX_SAFE_INTEGER,
        apiCallCount: Number.MAX_SAFE_INTEGER,
        absolute: true,
      });
      expect(await f.store.getSession('max')).toMatchObject({
        inputTokens: Number.MAX_SAFE_INTEGER,
        apiCallCount: Number.MAX_SAFE_INTEGER,
      });
      // Message and tool-call counts go on from the largest 32-bit value (the API cannot get there quickly).
      await f.store.createSession('counted', 'cli');
      await f.raw(
        `UPDATE sessions SET message_count = ${2 ** 31 - 1}, tool_call_count = ${2 ** 31 - 1} WHERE id = 'counted'`,
      );
      await f.store.appendMessage('counted', 'assistant', null, {
        toolCalls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '{}' } }],
      });
      expect(await f.store.getSession('counted')).toMatchObject({ messageCount: 2 ** 31, toolCallCount: 2 ** 31 });
    });
  });

  describe('deletes and prunes', () => {
    it('S17/S18 deletes a session with its messages; an unknown id gives false', async () => {
      await f.store.createSession('s1', 'cli');
      await f.store.appendMessage('s1', 'user', 'hi');
      expect(await f.store.deleteSession('s1')).toBe(true);
      expect(await f.store.getSession('s1')).toBeNull();
      expect(await f.store.messageCount({ sessionId: 's1' })).toBe(0);
      expect(await f.store.messageCount()).toBe(0);
      expect(await f.store.deleteSession('nope')).toBe(false);
    });

    it('S19 orphans direct children instead of deleting them', async () => {
      await f.store.createSession('parent', 'cli');
      await f.store.createSession('child', 'cli', { parentSessionId: 'parent' });
      await f.store.createSession('grandchild', 'cli', { parentSessionId: 'child' });
      expect(await f.store.deleteSession('parent')).toBe(true);
      expect((await f.store.getSession('child'))!.parentSessionId).toBeNull();
      expect((await f.store.getSession('grandchild'))!.parentSessionId).toBe('child');
    });

    it('clearMessages empties the transcript and zeroes both counters, keeping tokens', async () => {
      await f.store.createSession('s1', 'cli');
      await f.store.appendMessage('s1', 'assistant', 'x', { toolCalls: [{ id: 'c1' }] });
      await f.store.updateTokenCounts('s1', { inputTokens: 9 });
      await f.store.clearMessages('s1');
      expect(await f.store.getMessages('s1')).toEqual([]);
      expect(await f.store.getSession('s1')).toMatchObject({ messageCount: 0, toolCallCount: 0, inputTokens: 9 });
    });

    it('S20/S21 prunes ended sessions older than the cutoff, never live ones', async () => {
      f.clock.set(f.clock.peek() - 100 * DAY);
      await f.store.createSession('old', 'cli');
      await f.store.endSession('old', 'done');
      f.clock.advance(-100 * DAY);
      await f.store.createSession('active', 'cli');
      f.clock.reset();
      await f.store.createSession('new', 'cli');
      expect(await f.store.pruneSessions({ olderThanDays: 90 })).toBe(1);
      expect(await f.store.getSession('old')).toBeNull();
      expect(await f.store.getSession('new')).not.toBeNull();
      expect(await f.store.getSession('active')).not.toBeNull();
    });

    it('S22 prunes by source', async () => {
      f.clock.set(f.clock.peek() - 200 * DAY);
      for (const [id, src] of [
        ['old_cli', 'cli'],
        ['old_tg', 'telegram'],
      ] as const) {
        await f.store.createSession(id, src);
        await f.store.appendMessage(id, 'user', 'm');
        await f.store.endSession(id, 'done');
      }
      f.clock.reset();
      expect(await f.store.pruneSessions({ olderThanDays: 90, source: 'cli' })).toBe(1);
      expect(await f.store.getSession('old_cli')).toBeNull();
      expect(await f.store.getSession('old_tg')).not.toBeNull();
      expect(await f.store.messageCount()).toBe(1);
    });

    it('S23/S24 re-parents the survivors of a chain and removes an all-old chain whole', async () => {
      f.clock.set(f.clock.peek() - 200 * DAY);
      await f.store.createSession('A', 'cli');
      await f.store.createSession('B', 'cli', { parentSessionId: 'A' });
      await f.store.createSession('X', 'cli');
      await f.store.createSession('Y', 'cli', { parentSessionId: 'X' });
      await f.store.createSession('Z', 'cli', { parentSessionId: 'Y' });
      f.clock.reset();
      f.clock.advance(-10 * DAY);
      await f.store.createSession('C', 'cli', { parentSessionId: 'B' });
      await f.store.createSession('D', 'cli', { parentSessionId: 'C' });
      f.clock.reset();
      for (const id of ['A', 'B', 'C', 'D', 'X', 'Y', 'Z']) await f.store.endSession(id, 'done');
      expect(await f.store.pruneSessions({ olderThanDays: 90 })).toBe(5);
      expect(await f.store.getSession('A')).toBeNull();
      expect(await f.store.getSession('B')).toBeNull();
      expect((await f.store.getSession('C'))!.parentSessionId).toBeNull();
      expect((await f.store.getSession('D'))!.parentSessionId).toBe('C');
      expect(await f.store.sessionCount()).toBe(2);
    });

    it('S25 vacuums without error and keeps the data', async () => {
      await f.store.createSession('s1', 'cli');
      await f.store.appendMessage('s1', 'user', 'hello');
      await f.store.vacuum();
      expect(await f.store.messageCount()).toBe(1);
    });
  });

  describe('automatic prune and vacuum', () => {
    async function oldEnded(id: string, daysAgo = 100) {
      const now = f.clock.peek();
      f.clock.set(now - daysAgo * DAY);
      await f.store.createSession(id, 'cli');
      await f.store.endSession(id, 'done');
      f.clock.set(now);
    }

    it('S26 prunes and vacuums on the first run; S32 records the run time', async () => {
      await oldEnded('old1');
      await oldEnded('old2');
      await f.store.createSession('new', 'cli');
      const result = await f.store.maybeAutoPruneAndVacuum({ retentionDays: 90 });
      expect(result).toEqual({ skipped: false, pruned: 2, vacuumed: true });
      expect(await f.store.getSession('new')).not.toBeNull();
      const marker = Number(await f.store.getMeta('last_auto_prune'));
      expect(Math.abs(marker - f.clock.peek())).toBeLessThan(60);
    });

    it('S27 skips a second run inside the interval; S28 runs again after it', async () => {
      await f.store.maybeAutoPruneAndVacuum();
      await oldEnded('old2');
      expect(await f.store.maybeAutoPruneAndVacuum({ minIntervalHours: 24 })).toEqual({
        skipped: true,
        pruned: 0,
        vacuumed: false,
      });
      expect(await f.store.getSession('old2')).not.toBeNull();
      f.clock.advance(48 * 3600);
      expect(await f.store.maybeAutoPruneAndVacuum({ minIntervalHours: 24 })).toMatchObject({
        skipped: false,
        pruned: 1,
      });
      expect(await f.store.getSession('old2')).toBeNull();
    });

    it('S29/S30/S31 records the attempt without pruning, honours vacuum: false, and ignores a corrupt marker', async () => {
      await f.store.createSession('fresh', 'cli');
      expect(await f.store.maybeAutoPruneAndVacuum()).toEqual({ skipped: false, pruned: 0, vacuumed: false });
      expect(await f.store.getMeta('last_auto_prune')).not.toBeNull();
      await f.store.setMeta('last_auto_prune', 'not-a-timestamp');
      await oldEnded('old');
      expect(await f.store.maybeAutoPruneAndVacuum({ vacuum: false })).toEqual({
        skipped: false,
        pruned: 1,
        vacuumed: false,
      });
    });
  });

  describe('resolving ids', () => {
    it('S36 resolves an exact id and a unique prefix', async () => {
      await f.store.createSession('20260315_092437_c9a6ff', 'cli');
      expect(await f.store.resolveSessionId('20260315_092437_c9a6ff')).toBe('20260315_092437_c9a6ff');
      expect(await f.store.resolveSessionId('20260315_092437_c9a6')).toBe('20260315_092437_c9a6ff');
    });

    it('S37 returns null for an ambiguous prefix', async () => {
      await f.store.createSession('20260315_092437_c9a6aa', 'cli');
      await f.store.createSession('20260315_092437_c9a6bb', 'cli');
      expect(await f.store.resolveSessionId('20260315_092437_c9a6')).toBeNull();
      expect(await f.store.resolveSessionId('zzz')).toBeNull();
    });

    it('S38 escapes LIKE wildcards in the prefix', async () => {
      await f.store.createSession('20260315_092437_c9a6ff', 'cli');
      await f.store.createSession('20260315X092437_c9a6ff', 'cli');
      expect(await f.store.resolveSessionId('20260315_092437')).toBe('20260315_092437_c9a6ff');
    });

    it('matches the prefix ASCII-case-insensitively, as SQLite LIKE does', async () => {
      await f.store.createSession('Session-ABC', 'cli');
      expect(await f.store.resolveSessionId('session-a')).toBe('Session-ABC');
    });
  });

  describe('meta, counts, export', () => {
    it('X1-X3 reads and upserts meta', async () => {
      expect(await f.store.getMeta('nonexistent')).toBeNull();
      await f.store.setMeta('foo', 'v1');
      await f.store.setMeta('foo', 'v2');
      expect(await f.store.getMeta('foo')).toBe('v2');
    });

    it('X8 counts sessions and messages, by source and by session', async () => {
      expect(await f.store.sessionCount()).toBe(0);
      expect(await f.store.messageCount()).toBe(0);
      await f.store.createSession('s1', 'cli');
      await f.store.createSession('s2', 'cli');
      await f.store.createSession('s3', 'telegram');
      await f.store.appendMessage('s1', 'user', 'a');
      await f.store.appendMessage('s2', 'user', 'b');
      await f.store.appendMessage('s2', 'assistant', 'c');
      expect(await f.store.sessionCount()).toBe(3);
      expect(await f.store.sessionCount({ source: 'cli' })).toBe(2);
      expect(await f.store.sessionCount({ source: 'telegram' })).toBe(1);
      expect(await f.store.messageCount()).toBe(3);
      expect(await f.store.messageCount({ sessionId: 's1' })).toBe(1);
      expect(await f.store.messageCount({ sessionId: 's2' })).toBe(2);
    });

    it('X4/X5 exports a session with its messages, or null', async () => {
      await f.store.createSession('s1', 'cli', { model: 'test' });
      await f.store.appendMessage('s1', 'user', 'one');
      await f.store.appendMessage('s1', 'assistant', 'two');
      const exported = await f.store.exportSession('s1');
      expect(exported).toMatchObject({ id: 's1', source: 'cli', model: 'test' });
      expect(exported!.messages.map((m) => m.content)).toEqual(['one', 'two']);
      expect(await f.store.exportSession('nope')).toBeNull();
    });

    it('X6 exports everything, or one source, most recently active first', async () => {
      await f.store.createSession('s1', 'cli');
      await f.store.createSession('s2', 'telegram');
      await f.store.appendMessage('s1', 'user', 'latest activity');
      const all = await f.store.exportAll();
      expect(all.map((s) => s.id)).toEqual(['s1', 's2']);
      expect(all[0]!.lastActive).toBeGreaterThan(all[0]!.startedAt);
      expect(all[1]!.lastActive).toBe(all[1]!.startedAt);
      const cli = await f.store.exportAll({ source: 'cli' });
      expect(cli.map((s) => [s.id, s.source, s.messages.length])).toEqual([['s1', 'cli', 1]]);
    });
  });
}
