/** Contract: lineage, compression tips, resume redirect and the rich listing (spec §5, §12.4). */
import { describe, expect, it } from 'vitest';
import type { StoreFixture } from '../fixture.js';

// size: one describe block of the contract, each `it` one rule of the spec; splitting it would scatter the spec.
export function lineageContract(f: StoreFixture): void {
  const t0 = () => f.clock.peek();

  describe('rich listing', () => {
    it('L1-L3, L8 previews the first user message: flattened, 60 characters plus "..."', async () => {
      await f.store.createSession('s1', 'cli');
      await f.store.appendMessage('s1', 'system', 'system prompt');
      await f.store.appendMessage('s1', 'user', 'Help me refactor the auth module please');
      await f.store.appendMessage('s1', 'assistant', 'Sure');
      await f.store.createSession('long', 'cli');
      await f.store.appendMessage('long', 'user', 'A'.repeat(100));
      await f.store.createSession('sys', 'cli');
      await f.store.appendMessage('sys', 'system', 'only system');
      await f.store.createSession('lines', 'cli');
      await f.store.appendMessage('lines', 'user', 'Line one\nLine two\r\nLine three');
      const rows = Object.fromEntries((await f.store.listSessionsRich()).map((r) => [r.id, r]));
      expect(rows.s1!.preview).toContain('Help me refactor the auth module');
      expect(rows.long!.preview).toHaveLength(63);
      expect(rows.long!.preview.endsWith('...')).toBe(true);
      expect(rows.sys!.preview).toBe('');
      expect(rows.lines!.preview).not.toMatch(/[\n\r]/);
      expect(rows.lines!.preview).toContain('Line one Line two');
    });

    it('previews structured first messages by their text parts', async () => {
      await f.store.createSession('mm', 'cli');
      await f.store.appendMessage('mm', 'user', [
        { type: 'image_url', image_url: { url: 'x' } },
        { type: 'text', text: 'What is this?' },
      ]);
      await f.store.createSession('img', 'cli');
      await f.store.appendMessage('img', 'user', [{ type: 'image_url', image_url: { url: 'x' } }]);
      const rows = Object.fromEntries((await f.store.listSessionsRich()).map((r) => [r.id, r.preview]));
      expect(rows).toMatchObject({ mm: 'What is this?', img: '[multimodal content]' });
    });

    it('L4-L7 reports last activity, titles, and filters by source', async () => {
      await f.store.createSession('s1', 'cli');
      await f.store.appendMessage('s1', 'user', 'a');
      f.clock.advance(0.01);
      await f.store.appendMessage('s1', 'assistant', 'b');
      await f.store.setSessionTitle('s1', 'titled');
      await f.store.createSession('s2', 'telegram');
      const rows = Object.fromEntries((await f.store.listSessionsRich()).map((r) => [r.id, r]));
      expect(rows.s1!.lastActive).toBeGreaterThan(rows.s1!.startedAt);
      expect(rows.s2!.lastActive).toBe(rows.s2!.startedAt);
      expect(rows.s1!.title).toBe('titled');
      expect((await f.store.listSessionsRich({ source: 'cli' })).map((r) => r.id)).toEqual(['s1']);
    });

    it('L9-L11 shows branch children, hides delegates and compression continuations', async () => {
      await f.store.createSession('parent', 'cli');
      await f.store.endSession('parent', 'branched');
      await f.store.createSession('branch', 'cli', { parentSessionId: 'parent' });
      await f.store.appendMessage('branch', 'user', 'x');
      await f.store.createSession('root', 'cli');
      await f.store.createSession('delegate', 'cli', { parentSessionId: 'root' });
      await f.store.createSession('croot', 'cli');
      await f.store.endSession('croot', 'compression');
      await f.store.createSession('cont', 'cli', { parentSessionId: 'croot' });
      const ids = (await f.store.listSessionsRich({ projectCompressionTips: false })).map((r) => r.id);
      expect(ids).toEqual(expect.arrayContaining(['parent', 'branch', 'root', 'croot']));
      expect(ids).not.toContain('delegate');
      expect(ids).not.toContain('cont');
      expect((await f.store.listSessionsRich({ includeChildren: true })).map((r) => r.id)).toEqual(
        expect.arrayContaining(['delegate', 'cont']),
      );
    });

    async function chain() {
      const start = t0();
      f.clock.set(start);
      await f.store.createSession('root1', 'cli');
      await f.store.appendMessage('root1', 'user', 'root message');
      f.clock.set(start + 600);
      await f.store.createSession('delegate1', 'cli', { parentSessionId: 'root1' });
      f.clock.set(start + 1800);
      await f.store.endSession('root1', 'compression');
      f.clock.set(start + 1801);
      await f.store.createSession('mid1', 'cli', { parentSessionId: 'root1' });
      await f.store.appendMessage('mid1', 'user', 'mid message');
      f.clock.set(start + 3600);
      await f.store.endSession('mid1', 'compression');
      f.clock.set(start + 3601);
      await f.store.createSession('tip1', 'cli', { parentSessionId: 'mid1' });
      await f.store.appendMessage('tip1', 'user', 'latest message');
      f.clock.set(start + 3700);
      await f.store.createSession('solo', 'cli');
      await f.store.appendMessage('solo', 'user', 'solo');
      return start;
    }

    it('L12 finds the compression tip from anywhere in the chain, never via a delegate', async () => {
      await chain();
      for (const id of ['root1', 'mid1', 'tip1']) expect(await f.store.getCompressionTip(id)).toBe('tip1');
      expect(await f.store.getCompressionTip('solo')).toBe('solo');
      expect(await f.store.getCompressionTip('delegate1')).toBe('delegate1');
      expect(await f.store.getCompressionTip('nope')).toBe('nope');
    });

    it("L13 projects a compression chain onto its tip, keeping the root's start", async () => {
      await chain();
      const rootStart = (await f.store.getSession('root1'))!.startedAt;
      const rows = await f.store.listSessionsRich({ source: 'cli', limit: 20 });
      const ids = rows.map((r) => r.id);
      expect(ids).toEqual(expect.arrayContaining(['tip1', 'solo']));
      for (const hidden of ['root1', 'mid1', 'delegate1']) expect(ids).not.toContain(hidden);
      const tip = rows.find((r) => r.id === 'tip1')!;
      expect(tip).toMatchObject({ lineageRootId: 'root1', endedAt: null, endReason: null, startedAt: rootStart });
      expect(tip.preview.startsWith('latest message')).toBe(true);
      expect(rows.find((r) => r.id === 'solo')!.lineageRootId).toBeUndefined();
    });

    it('L14 lists the raw root without projection', async () => {
      await chain();
      const rows = await f.store.listSessionsRich({ projectCompressionTips: false });
      const root = rows.find((r) => r.id === 'root1')!;
      expect(root.endReason).toBe('compression');
      expect(root.lineageRootId).toBeUndefined();
      expect(rows.map((r) => r.id)).not.toContain('tip1');
    });

    it("L15 orders projected rows by the root's start", async () => {
      const start = await chain();
      f.clock.set(start + 120);
      await f.store.createSession('newer', 'cli');
      const ids = (await f.store.listSessionsRich()).map((r) => r.id);
      expect(ids.indexOf('newer')).toBeLessThan(ids.indexOf('tip1'));
    });

    it('L16 leaves a compression root without a child raw', async () => {
      await f.store.createSession('orphan', 'cli');
      await f.store.endSession('orphan', 'compression');
      const [row] = await f.store.listSessionsRich();
      expect(row).toMatchObject({ id: 'orphan', endReason: 'compression' });
      expect(row!.lineageRootId).toBeUndefined();
    });

    it('L17 excludes sources', async () => {
      await f.store.createSession('s1', 'cli');
      await f.store.createSession('s2', 'tool');
      await f.store.createSession('s3', 'telegram');
      await f.store.createSession('s4', 'cron');
      const ids = async (o: Parameters<typeof f.store.listSessionsRich>[0]) =>
        (await f.store.listSessionsRich(o)).map((r) => r.id).sort();
      expect(await ids({ excludeSources: ['tool'] })).toEqual(['s1', 's3', 's4']);
      expect(await ids({ excludeSources: ['tool', 'cron'] })).toEqual(['s1', 's3']);
      expect(await ids({ excludeSources: [] })).toEqual(['s1', 's2', 's3', 's4']);
      expect(await ids({ source: 'tool' })).toEqual(['s2']);
    });

    it('orders by last activity across a compression chain when asked, and pages after ordering', async () => {
      const start = t0();
      f.clock.set(start);
      await f.store.createSession('old', 'cli');
      f.clock.set(start + 10);
      await f.store.createSession('new', 'cli');
      f.clock.set(start + 20);
      await f.store.appendMessage('old', 'user', 'touched later');
      expect((await f.store.listSessionsRich()).map((r) => r.id)).toEqual(['new', 'old']);
      expect((await f.store.listSessionsRich({ orderByLastActive: true })).map((r) => r.id)).toEqual(['old', 'new']);

      await f.store.endSession('new', 'compression');
      f.clock.set(start + 30);
      await f.store.createSession('newtip', 'cli', { parentSessionId: 'new' });
      await f.store.appendMessage('newtip', 'user', 'latest');
      const [first] = await f.store.listSessionsRich({ orderByLastActive: true, limit: 1 });
      expect(first).toMatchObject({ id: 'newtip', lineageRootId: 'new' });
      const second = await f.store.listSessionsRich({ orderByLastActive: true, limit: 1, offset: 1 });
      expect(second.map((r) => r.id)).toEqual(['old']);
      expect(await f.store.listSessionsRich({ limit: -1 })).toHaveLength(2);
      expect(await f.store.listSessionsRich({ limit: 0 })).toHaveLength(0);
    });
  });

  describe('maintained activity (orderByLastActive reads sessions.chain_last_active)', () => {
    /** Byte order, as the listing compares ids (COLLATE "C" on Postgres). */
    const byteCompare = (a: string, b: string) => Buffer.compare(Buffer.from(a), Buffer.from(b));

    /**
     * Hermes' order_by_last_active computed from public reads: per session the newest of its own activity
     * (latest message, else started_at) over itself and its compression continuations (bounded at 100 hops).
     * Asserts the listing's order and each row's lastActive, for every session and for the default filter.
     */
    async function expectHermesActivityOrder(): Promise<void> {
      const all = await f.store.listSessionsRich({ includeChildren: true, limit: -1 });
      const byId = new Map(all.map((r) => [r.id, r]));
      const own = new Map<string, number>();
      for (const r of all) {
        const stamps = (await f.store.getMessages(r.id)).map((m) => m.timestamp);
        const expected = stamps.length > 0 ? Math.max(...stamps) : r.startedAt;
        expect(r.lastActive, `lastActive of ${r.id}`).toBe(expected);
        own.set(r.id, expected);
      }
      const continuations = (id: string) => {
        const p = byId.get(id)!;
        return all.filter(
          (c) =>
            c.parentSessionId === id && p.endReason === 'compression' && p.endedAt !== null && c.startedAt >= p.endedAt,
        );
      };
      const chain = (id: string) => {
        let best = own.get(id)!;
        let frontier = [id];
        for (let depth = 0; depth < 100 && frontier.length > 0; depth++) {
          frontier = frontier.flatMap((x) => continuations(x).map((c) => c.id));
          for (const x of frontier) best = Math.max(best, own.get(x)!);
        }
        return best;
      };
      const order = (rows: typeof all) =>
        rows
          .map((r) => ({ id: r.id, key: chain(r.id), startedAt: r.startedAt }))
          .sort((a, b) => b.key - a.key || b.startedAt - a.startedAt || byteCompare(b.id, a.id))
          .map((r) => r.id);
      const listed = await f.store.listSessionsRich({
        includeChildren: true,
        orderByLastActive: true,
        limit: -1,
      });
      expect(listed.map((r) => r.id)).toEqual(order(all));
      const roots = all.filter((r) => {
        const p = r.parentSessionId === null ? null : byId.get(r.parentSessionId);
        return (
          r.parentSessionId === null ||
          (p !== undefined &&
            p !== null &&
            p.endReason === 'branched' &&
            p.endedAt !== null &&
            r.startedAt >= p.endedAt)
        );
      });
      const page = await f.store.listSessionsRich({
        orderByLastActive: true,
        limit: -1,
        projectCompressionTips: false,
      });
      expect(page.map((r) => r.id)).toEqual(order(roots));
    }

    it("stays equal to Hermes' chain activity through appends, deletes, replaces, ends, reopens and parent changes", async () => {
      const start = t0();
      const at = (s: number) => f.clock.set(start + s);
      at(0);
      await f.store.createSession('a', 'cli');
      await f.store.appendMessage('a', 'user', 'a1');
      at(10);
      await f.store.endSession('a', 'compression');
      at(11);
      await f.store.createSession('b', 'cli', { parentSessionId: 'a' });
      await f.store.appendMessage('b', 'user', 'b1');
      at(20);
      await f.store.endSession('b', 'compression');
      at(21);
      await f.store.createSession('c', 'telegram', { parentSessionId: 'b' });
      at(22);
      await f.store.createSession('solo', 'discord');
      at(23);
      await f.store.createSession('delegate', 'tool', { parentSessionId: 'solo' });
      await f.store.appendMessage('delegate', 'assistant', 'working');
      at(24);
      await f.store.endSession('solo', 'branched');
      at(25);
      await f.store.createSession('branch', 'cli', { parentSessionId: 'solo' });
      await expectHermesActivityOrder();

      at(30);
      await f.store.appendMessage('c', 'user', 'the tip moves the whole chain');
      await expectHermesActivityOrder();
      at(31);
      await f.store.appendMessages('branch', [
        { role: 'user', content: 'x' },
        { role: 'assistant', content: 'y' },
      ]);
      await expectHermesActivityOrder();
      // replaceMessages rewrites the tip's history with the current time; clearMessages drops it to started_at.
      at(40);
      await f.store.replaceMessages('c', [{ role: 'user', content: 'rewritten' }]);
      await expectHermesActivityOrder();
      await f.store.clearMessages('c');
      await expectHermesActivityOrder();
      // Reopening b cuts c off the chain; ending it again restores it (with a new ended_at after c started: not a chain).
      await f.store.reopenSession('b');
      await expectHermesActivityOrder();
      at(41);
      await f.store.endSession('b', 'compression');
      await expectHermesActivityOrder();
      // A parent change, a start moved after the newest message, a moved message, a deleted middle session.
      await f.raw("UPDATE sessions SET parent_session_id = 'a' WHERE id = 'branch'");
      await expectHermesActivityOrder();
      await f.raw(
        "UPDATE sessions SET started_at = (SELECT started_at FROM sessions WHERE id = 'branch') WHERE id = 'a'",
      );
      await expectHermesActivityOrder();
      await f.raw(
        "UPDATE messages SET timestamp = (SELECT started_at FROM sessions WHERE id = 'a') WHERE session_id = 'delegate'",
      );
      await expectHermesActivityOrder();
      await f.raw("UPDATE messages SET session_id = 'solo' WHERE session_id = 'branch'");
      await expectHermesActivityOrder();
      await f.raw("DELETE FROM messages WHERE session_id = 'solo' AND role = 'assistant'");
      await expectHermesActivityOrder();
      expect(await f.store.deleteSession('b')).toBe(true);
      await expectHermesActivityOrder();
    });

    it('stays right when prune removes part of a chain and when a first message is older than its session', async () => {
      const start = t0();
      f.clock.set(start - 200 * 86400);
      await f.store.createSession('old-root', 'cli');
      await f.store.appendMessage('old-root', 'user', 'long ago');
      await f.store.endSession('old-root', 'compression');
      await f.store.createSession('old-tip', 'cli', { parentSessionId: 'old-root' });
      await f.store.appendMessage('old-tip', 'user', 'still long ago');
      f.clock.set(start);
      await f.store.createSession('recent', 'cli');
      await f.store.appendMessage('recent', 'user', 'now');
      f.clock.set(start + 5);
      await f.store.appendMessage('old-tip', 'user', 'picked up again');
      await expectHermesActivityOrder();
      expect(await f.store.pruneSessions({ olderThanDays: 90 })).toBe(1);
      await expectHermesActivityOrder();
      // Its start moved past its only message: the message (older) is what counts, as in Hermes.
      await f.raw(
        "UPDATE sessions SET started_at = (SELECT started_at FROM sessions WHERE id = 'recent') WHERE id = 'old-tip'",
      );
      await f.raw("DELETE FROM messages WHERE session_id = 'old-tip' AND content = 'picked up again'");
      await expectHermesActivityOrder();
      f.clock.set(start + 6);
      await f.store.createSession('late', 'cli');
      await f.raw("UPDATE messages SET session_id = 'late' WHERE session_id = 'recent'");
      await expectHermesActivityOrder();
    });
  });

  describe('lineage walks', () => {
    it('returns the parent chain root first, and the descendants oldest first', async () => {
      await f.store.createSession('a', 'cli');
      await f.store.createSession('b', 'cli', { parentSessionId: 'a' });
      await f.store.createSession('c', 'cli', { parentSessionId: 'b' });
      await f.store.createSession('c2', 'cli', { parentSessionId: 'b' });
      expect(await f.store.getLineage('c')).toEqual(['a', 'b', 'c']);
      expect(await f.store.getLineage('a')).toEqual(['a']);
      expect(await f.store.getLineage('nope')).toEqual(['nope']);
      expect(await f.store.getDescendants('a')).toEqual(['b', 'c', 'c2']);
      expect(await f.store.getDescendants('c')).toEqual([]);
    });

    it('stays finite on a parent cycle, even one that looks like a compression chain all the way round', async () => {
      await f.store.createSession('x', 'cli');
      await f.store.endSession('x', 'compression');
      await f.store.createSession('y', 'cli', { parentSessionId: 'x' });
      await f.store.endSession('y', 'compression');
      await f.store.createSession('z', 'cli', { parentSessionId: 'y' });
      await f.store.endSession('z', 'compression');
      // Close the loop: x continues z. (No API makes a cycle; a damaged or hand-edited database can.)
      await f.raw(
        "UPDATE sessions SET parent_session_id = 'z', started_at = (SELECT ended_at FROM sessions WHERE id = 'z') WHERE id = 'x'",
      );
      expect(await f.store.getLineage('x')).toEqual(['y', 'z', 'x']);
      expect(await f.store.getDescendants('x')).toEqual(['y', 'z']);
      expect(await f.store.getCompressionTip('x')).toBe('z');
      expect(await f.store.resolveResumeSessionId('x')).toBe('x');
      expect(await f.store.listSessionsRich({ includeChildren: true, orderByLastActive: true })).toHaveLength(3);
      expect(await f.store.listSessionsRich({ orderByLastActive: true })).toEqual([]);
      expect(await f.store.getMessagesAsConversation('x', { includeAncestors: true })).toEqual([]);
    });

    it('bounds the ancestor walk at 100 hops', async () => {
      await f.store.createSession('n0', 'cli');
      for (let i = 1; i <= 120; i++) await f.store.createSession(`n${i}`, 'cli', { parentSessionId: `n${i - 1}` });
      const lineage = await f.store.getLineage('n120');
      expect(lineage).toHaveLength(101);
      expect(lineage.at(-1)).toBe('n120');
      expect(lineage[0]).toBe('n20');
    });
  });

  describe('resume redirect', () => {
    it('L18 follows empty sessions to the first one with messages', async () => {
      await f.store.createSession('head', 'cli');
      await f.store.createSession('mid1', 'cli', { parentSessionId: 'head' });
      await f.store.createSession('mid2', 'cli', { parentSessionId: 'mid1' });
      await f.store.createSession('mid3', 'cli', { parentSessionId: 'mid2' });
      await f.store.createSession('bulk', 'cli', { parentSessionId: 'mid3' });
      for (let i = 0; i < 5; i++) await f.store.appendMessage('bulk', 'user', `m${i}`);
      await f.store.createSession('tail', 'cli', { parentSessionId: 'bulk' });
      expect(await f.store.resolveResumeSessionId('head')).toBe('bulk');
    });

    it('L19-L21 stays on a session with messages and returns the input when nothing is found', async () => {
      await f.store.createSession('root', 'cli');
      await f.store.appendMessage('root', 'user', 'x');
      await f.store.createSession('child', 'cli', { parentSessionId: 'root' });
      expect(await f.store.resolveResumeSessionId('root')).toBe('root');
      await f.store.createSession('e1', 'cli');
      await f.store.createSession('e2', 'cli', { parentSessionId: 'e1' });
      await f.store.createSession('e3', 'cli', { parentSessionId: 'e2' });
      expect(await f.store.resolveResumeSessionId('e1')).toBe('e1');
      expect(await f.store.resolveResumeSessionId('nonexistent')).toBe('nonexistent');
      expect(await f.store.resolveResumeSessionId('')).toBe('');
      expect(await f.store.resolveResumeSessionId(null)).toBeNull();
      expect(await f.store.resolveResumeSessionId(undefined)).toBeUndefined();
      await f.store.createSession('a', 'cli');
      await f.store.createSession('b', 'cli', { parentSessionId: 'a' });
      await f.store.createSession('c', 'cli', { parentSessionId: 'b' });
      await f.store.createSession('d', 'cli', { parentSessionId: 'c' });
      await f.store.appendMessage('d', 'user', 'here');
      expect(await f.store.resolveResumeSessionId('b')).toBe('d');
      expect(await f.store.resolveResumeSessionId('c')).toBe('d');
    });

    it('L22 takes the newest fork', async () => {
      await f.store.createSession('parent', 'cli');
      await f.store.createSession('older_fork', 'cli', { parentSessionId: 'parent' });
      await f.store.appendMessage('older_fork', 'user', 'old');
      f.clock.advance(5);
      await f.store.createSession('newer_fork', 'cli', { parentSessionId: 'parent' });
      await f.store.appendMessage('newer_fork', 'user', 'new');
      expect(await f.store.resolveResumeSessionId('parent')).toBe('newer_fork');
    });

    it('gives up after 32 steps', async () => {
      await f.store.createSession('r0', 'cli');
      for (let i = 1; i <= 40; i++) await f.store.createSession(`r${i}`, 'cli', { parentSessionId: `r${i - 1}` });
      await f.store.appendMessage('r40', 'user', 'too far');
      await f.store.appendMessage('r32', 'user', 'just in reach');
      expect(await f.store.resolveResumeSessionId('r0')).toBe('r32');
      expect(await f.store.resolveResumeSessionId('r1')).toBe('r32');
    });
  });
}
