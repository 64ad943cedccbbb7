/** Contract: message and session search (hermes-schema-search.md §3-§4 and §8.1's search rows). */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { TestClock } from '../clock.js';
import type { StoreFixture } from '../fixture.js';

// size: one describe block of the contract, each `it` one rule of the spec; splitting it would scatter the spec.
export function searchContract(f: StoreFixture): void {
  const ids = async (q: string, o: Parameters<typeof f.store.searchMessages>[1] = {}) =>
    (await f.store.searchMessages(q, o)).map((h) => h.sessionId).sort();

  describe('search: FTS indexing', () => {
    it('finds tool names, tool-call arguments and function names', async () => {
      await f.store.createSession('s1', 'cli');
      await f.store.appendMessage('s1', 'assistant', '', { toolName: 'UNIQUETOOLNAME' });
      await f.store.appendMessage('s1', 'assistant', '', {
        toolCalls: [
          {
            id: 'c',
            type: 'function',
            function: { name: 'UNIQUEFUNCNAME', arguments: '{"query": "UNIQUESEARCHTOKEN"}' },
          },
        ],
      });
      expect(await f.store.searchMessages('UNIQUETOOLNAME')).toHaveLength(1);
      expect(await f.store.searchMessages('UNIQUESEARCHTOKEN')).toHaveLength(1);
      expect(await f.store.searchMessages('UNIQUEFUNCNAME')).toHaveLength(1);
    });

    it('forgets deleted messages and re-indexes replaced ones', async () => {
      await f.store.createSession('s1', 'cli');
      await f.store.appendMessage('s1', 'assistant', 'hello', { toolName: 'web_search', toolCalls: [{ id: 'x' }] });
      await f.store.clearMessages('s1');
      expect(await f.store.searchMessages('hello')).toEqual([]);
      expect(await f.store.searchMessages('web_search')).toEqual([]);
      await f.store.replaceMessages('s1', [{ role: 'assistant', content: '', tool_name: 'ORIGINALTOOL' }]);
      expect(await f.store.searchMessages('ORIGINALTOOL')).toHaveLength(1);
      await f.store.replaceMessages('s1', [{ role: 'assistant', content: '', tool_name: 'RENAMEDTOOL' }]);
      expect(await f.store.searchMessages('ORIGINALTOOL')).toEqual([]);
      expect(await f.store.searchMessages('RENAMEDTOOL')).toHaveLength(1);
    });
  });

  describe('search: words', () => {
    it('marks a matched phrase or compound as one span and breaks time ties by rank, as FTS5 does', async () => {
      await f.store.createSession('s1', 'cli');
      // Hermes indexes content || ' ' || tool_name || ' ' || tool_calls, hence the trailing spaces.
      const docker = await f.store.appendMessage('s1', 'assistant', 'Use docker compose up.');
      const needle = await f.store.appendMessage('s1', 'user', 'the needle match is here');
      const chat = await f.store.appendMessage('s1', 'user', 'Run the chat-send command');
      expect((await f.store.searchMessages('docker')).map((h) => [h.id, h.snippet])).toEqual([
        [docker, 'Use >>>docker<<< compose up.  '],
      ]);
      expect((await f.store.searchMessages('"needle match"')).map((h) => [h.id, h.snippet])).toEqual([
        [needle, 'the >>>needle match<<< is here  '],
      ]);
      expect((await f.store.searchMessages('chat-send')).map((h) => [h.id, h.snippet])).toEqual([
        [chat, 'Run the >>>chat-send<<< command  '],
      ]);
      // Three messages in the same instant: newest and oldest order them by bm25 (the shortest text with
      // the most matches first), then by id, on every backend.
      f.clock.set(TestClock.START + 1000);
      const long = await f.store.appendMessage(
        's1',
        'user',
        'tie word in a much longer message with many other words around it',
      );
      f.clock.set(TestClock.START + 1000);
      const short = await f.store.appendMessage('s1', 'user', 'tie word twice tie');
      f.clock.set(TestClock.START + 1000);
      const plain = await f.store.appendMessage('s1', 'user', 'tie word once');
      f.clock.set(TestClock.START + 1000);
      const same = await f.store.appendMessage('s1', 'user', 'tie word once');
      for (const sort of ['newest', 'oldest', null] as const) {
        expect(
          (await f.store.searchMessages('tie', { sort })).map((h) => h.id),
          String(sort),
        ).toEqual([short, plain, same, long]);
      }
      // Hermes' short-CJK path is newest first, and a stable sort keeps same-instant messages in id order.
      f.clock.set(TestClock.START + 2000);
      const first = await f.store.appendMessage('s1', 'user', '今天通信正常');
      f.clock.set(TestClock.START + 2000);
      const second = await f.store.appendMessage('s1', 'user', '通信又失败了');
      f.clock.set(TestClock.START + 1500);
      const older = await f.store.appendMessage('s1', 'user', '通信');
      expect((await f.store.searchMessages('通信')).map((h) => h.id)).toEqual([first, second, older]);
      expect((await f.store.searchMessages('通信', { limit: 1 })).map((h) => h.id)).toEqual([first]);
      expect((await f.store.searchMessages('通信', { limit: 1, offset: 1 })).map((h) => h.id)).toEqual([second]);
    });

    it('finds content case-insensitively with marked snippets, and context around each hit', async () => {
      await f.store.createSession('s1', 'cli');
      await f.store.appendMessage('s1', 'user', 'How do I deploy with Docker?');
      await f.store.appendMessage('s1', 'assistant', 'Use docker compose up.');
      const hits = await f.store.searchMessages('docker');
      expect(hits).toHaveLength(2);
      expect(hits.some((h) => /docker/i.test(h.snippet ?? '') && h.snippet!.includes('>>>'))).toBe(true);
      const first = hits.find((h) => h.role === 'user')!;
      expect(first).toMatchObject({ sessionId: 's1', source: 'cli', toolName: null });
      expect(first.context.map((c) => c.content)).toEqual(['How do I deploy with Docker?', 'Use docker compose up.']);
      expect(await f.store.searchMessages('"compose up"')).toHaveLength(1);
      expect(await f.store.searchMessages('dock*')).toHaveLength(2);
      expect(await f.store.searchMessages('"docker networking"')).toEqual([]);
    });

    it('returns nothing for empty queries and survives special characters', async () => {
      await f.store.createSession('s1', 'cli');
      await f.store.appendMessage('s1', 'user', 'hello (problem) C++ {test}');
      expect(await f.store.searchMessages('')).toEqual([]);
      expect(await f.store.searchMessages('   ')).toEqual([]);
      for (const q of [
        'C++',
        '"unterminated',
        '(problem',
        'hello AND',
        '***',
        '{test}',
        'OR hello',
        'a AND OR b',
        'key:value',
        'C#',
        '50%',
        '-foo',
        'user@example.com',
        'path/to/file.py',
      ]) {
        expect(Array.isArray(await f.store.searchMessages(q)), q).toBe(true);
      }
      expect(await f.store.searchMessages('(problem')).toHaveLength(1);
      expect(await f.store.searchMessages('OR hello')).toHaveLength(1);
    });

    it('matches hyphenated, dotted and underscored terms as phrases', async () => {
      await f.store.createSession('s1', 'cli');
      await f.store.appendMessage('s1', 'user', 'Run the chat-send command');
      await f.store.appendMessage('s1', 'user', 'Working on P2.2 today');
      await f.store.appendMessage('s1', 'user', 'See simulate.p2.test.ts and sp_new');
      const chat = await f.store.searchMessages('chat-send');
      expect(chat).toHaveLength(1);
      expect(chat[0]!.snippet).toMatch(/chat/);
      expect(await f.store.searchMessages('P2.2')).toHaveLength(1);
      expect(await f.store.searchMessages('simulate.p2.test.ts')).toHaveLength(1);
      expect(await f.store.searchMessages('sp_new')).toHaveLength(1);
    });

    it('filters by source, excluded sources and role; all sources by default', async () => {
      for (const src of ['cli', 'telegram', 'signal', 'homeassistant', 'acp', 'matrix', 'tool']) {
        await f.store.createSession(src, src);
        await f.store.appendMessage(src, 'user', 'about Python');
        await f.store.appendMessage(src, 'assistant', 'FastAPI answer about Python');
      }
      expect(new Set(await ids('python')).size).toBe(7);
      expect(new Set(await ids('python', { sourceFilter: ['telegram'] }))).toEqual(new Set(['telegram']));
      expect(await ids('python', { sourceFilter: [] })).toEqual([]);
      expect(await ids('python', { excludeSources: ['tool'] })).not.toContain('tool');
      expect(new Set(await ids('python', { sourceFilter: ['cli', 'tool'], excludeSources: ['tool'] }))).toEqual(
        new Set(['cli']),
      );
      const roles = (await f.store.searchMessages('fastapi', { roleFilter: ['assistant'] })).map((h) => h.role);
      expect(new Set(roles)).toEqual(new Set(['assistant']));
      expect(await f.store.searchMessages('python', { roleFilter: [] })).toHaveLength(14);
    });

    it('uses same-session neighbours for context even when other sessions interleave', async () => {
      await f.store.createSession('s1', 'cli');
      await f.store.createSession('s2', 'cli');
      await f.store.appendMessage('s1', 'user', 'before needle');
      await f.store.appendMessage('s2', 'user', 'noise one');
      await f.store.appendMessage('s1', 'assistant', 'needle match');
      await f.store.appendMessage('s2', 'user', 'noise two');
      await f.store.appendMessage('s1', 'user', 'after needle');
      const [hit] = await f.store.searchMessages('"needle match"');
      expect(hit!.context.map((c) => c.content)).toEqual(['before needle', 'needle match', 'after needle']);
    });

    it('sorts by newest or oldest and pages stably', async () => {
      await f.store.createSession('s1', 'cli');
      for (let i = 0; i < 7; i++) await f.store.appendMessage('s1', 'user', `report number ${i}`);
      const newest = (await f.store.searchMessages('report', { sort: 'newest' })).map(
        (h) => h.context.find((c) => c.content.startsWith('report number'))!,
      );
      expect(newest).toHaveLength(7);
      // Hermes ignores case and surrounding whitespace in sort; the type asks for the canonical form.
      const newestIds = (await f.store.searchMessages('report', { sort: ' NEWEST ' as 'newest' })).map((h) => h.id);
      const oldestIds = (await f.store.searchMessages('report', { sort: 'oldest' })).map((h) => h.id);
      expect(oldestIds).toEqual([...newestIds].reverse());
      expect([...oldestIds].sort((a, b) => a - b)).toEqual(oldestIds);
      const pages = [
        ...(await f.store.searchMessages('report', { limit: 3, offset: 0 })),
        ...(await f.store.searchMessages('report', { limit: 3, offset: 3 })),
        ...(await f.store.searchMessages('report', { limit: 3, offset: 6 })),
      ].map((h) => h.id);
      expect(new Set(pages).size).toBe(7);
      expect(await f.store.searchMessages('report', { limit: 0 })).toEqual([]);
      expect(await f.store.searchMessages('report', { limit: -1 })).toHaveLength(7);
    });
  });

  describe('search: CJK', () => {
    it('finds Chinese, Japanese and Korean through the trigram and substring paths', async () => {
      await f.store.createSession('s1', 'cli');
      await f.store.appendMessage('s1', 'user', '昨天和其他Agent的聊天记录，记忆断裂问题复现了');
      await f.store.createSession('s2', 'cli');
      await f.store.appendMessage('s2', 'user', '今天讨论A2A通信协议的实现');
      await f.store.createSession('s3', 'cli');
      await f.store.appendMessage('s3', 'user', '안녕하세요 반갑습니다');
      await f.store.createSession('s4', 'cli');
      await f.store.appendMessage('s4', 'user', 'こんにちは世界');
      await f.store.createSession('s5', 'cli');
      await f.store.appendMessage('s5', 'user', '讨论Agent通信协议');
      expect(await ids('记忆断裂')).toEqual(['s1']);
      expect(await ids('通信')).toEqual(['s2', 's5']);
      expect(await ids('안녕')).toEqual(['s3']);
      expect(await ids('こんにちは')).toEqual(['s4']);
      expect(await ids('世界')).toEqual(['s4']);
      expect(await ids('Agent通信')).toEqual(['s5']);
      expect(await ids('agent通信')).toEqual(['s5']);
      const [centered] = await f.store.searchMessages('记忆断裂');
      expect(centered!.snippet).toContain('记忆断裂');
    });

    it('keeps filters on the CJK paths', async () => {
      await f.store.createSession('c', 'cli');
      await f.store.createSession('t', 'telegram');
      await f.store.createSession('x', 'tool');
      for (const id of ['c', 't', 'x']) {
        await f.store.appendMessage(id, 'user', '记忆断裂在…广西旅游攻略');
        await f.store.appendMessage(id, 'assistant', '记忆断裂的回答');
      }
      expect(await ids('记忆断裂', { sourceFilter: ['telegram'] })).toEqual(['t', 't']);
      expect(await ids('记忆断裂', { excludeSources: ['tool'] })).toEqual(['c', 'c', 't', 't']);
      expect((await f.store.searchMessages('记忆断裂', { roleFilter: ['assistant'] })).map((h) => h.role)).toEqual([
        'assistant',
        'assistant',
        'assistant',
      ]);
      expect(await ids('广西 OR 旅游', { sourceFilter: ['telegram'] })).toEqual(['t']);
    });

    it('supplements partial matches, deduplicates, escapes wildcards, honours OR', async () => {
      await f.store.createSession('s1', 'cli');
      await f.store.appendMessage('s1', 'user', '昨晚讨论了记忆系统');
      await f.store.createSession('s2', 'cli');
      await f.store.appendMessage('s2', 'user', '昨晚的会议纪要已发送');
      await f.store.createSession('s3', 'cli');
      await f.store.appendMessage('s3', 'user', '测试去重逻辑');
      await f.store.createSession('s4', 'cli');
      await f.store.appendMessage('s4', 'user', '达成100%完成率');
      await f.store.createSession('s5', 'cli');
      await f.store.appendMessage('s5', 'user', '达成100完成率是目标');
      await f.store.createSession('s6', 'cli');
      await f.store.appendMessage('s6', 'user', '断裂连接需要修复');
      await f.store.createSession('s7', 'cli');
      await f.store.appendMessage('s7', 'user', '广西是个好地方，去过桂林');
      await f.store.createSession('s8', 'cli');
      await f.store.appendMessage('s8', 'user', '漓江风景很美，值得旅游');
      await f.store.createSession('s9', 'cli');
      await f.store.appendMessage('s9', 'user', 'English only text');
      expect(await ids('昨晚')).toEqual(['s1', 's2']);
      expect(await ids('测试')).toEqual(['s3']);
      expect(await ids('100%完成')).toEqual(['s4']);
      expect(await ids('记忆系统 OR 断裂连接')).toEqual(['s1', 's6']);
      expect(await ids('记忆系统 or 断裂连接')).toEqual([]);
      expect(await ids('记忆系统 断裂连接')).toEqual([]);
      expect(await ids('记忆系统 NOT 断裂连接')).toEqual(['s1']);
      expect(await ids('广西 OR 桂林 OR 漓江 OR 旅游')).toEqual(['s7', 's8']);
      expect(await ids('记忆断裂')).toEqual([]);
    });

    it('does not lose either part of a mixed-script query', async () => {
      await f.store.createSession('en', 'cli');
      await f.store.appendMessage('en', 'user', 'docker compose notes');
      await f.store.createSession('zh', 'cli');
      await f.store.appendMessage('zh', 'user', '记忆断裂的问题');
      expect(await ids('docker OR 记忆')).toEqual(['en', 'zh']);
      expect(await ids('docker OR 记忆断裂')).toEqual(['en', 'zh']);
    });
  });

  describe('search: sessions', () => {
    it('lists sessions by last activity with paging and a source filter', async () => {
      f.clock.set(f.clock.peek() + 1000);
      await f.store.createSession('s_active_later', 'cli');
      f.clock.set(f.clock.peek() + 1000);
      await f.store.createSession('s_started_later', 'telegram');
      f.clock.set(f.clock.peek() + 1000);
      await f.store.appendMessage('s_active_later', 'user', 'late activity');
      const rows = await f.store.searchSessions();
      expect(rows.map((r) => r.id)).toEqual(['s_active_later', 's_started_later']);
      expect(rows[0]!.lastActive).toBeGreaterThan(rows[1]!.lastActive);
      expect(rows[1]!.lastActive).toBe(rows[1]!.startedAt);
      expect((await f.store.searchSessions({ source: 'cli' })).map((r) => r.id)).toEqual(['s_active_later']);
      for (let i = 0; i < 3; i++) await f.store.createSession(`extra${i}`, 'cli');
      const a = (await f.store.searchSessions({ limit: 2 })).map((r) => r.id);
      const b = (await f.store.searchSessions({ limit: 2, offset: 2 })).map((r) => r.id);
      expect(a).toHaveLength(2);
      expect(b.filter((id) => a.includes(id))).toEqual([]);
    });
  });

  describe('search: any string', () => {
    it('answers every generated query with a list, never an error (10,000 queries)', async () => {
      await f.store.createSession('s1', 'cli');
      for (const c of [
        'docker compose up',
        '记忆断裂问题',
        'p2.2 sp_new chat-send',
        'こんにちは世界',
        'a "quoted" b',
        '100% done: $HOME #tag @user',
      ]) {
        await f.store.appendMessage('s1', 'user', c, { toolName: 'web_search', toolCalls: [{ args: c }] });
      }
      const pieces = fc.oneof(
        fc.constantFrom(
          'docker',
          'AND',
          'OR',
          'NOT',
          'and',
          '"',
          '*',
          '-',
          ':',
          '#',
          '@',
          '/',
          '%',
          '$',
          '(',
          ')',
          '{',
          '}',
          '^',
          '+',
          '\u0000',
          '😀',
          '\ud800',
          '记忆',
          '记忆断裂',
          'こんにちは',
          '안녕',
          'NEAR',
          'content:',
          '\\',
          "'",
          '%_',
          '\t',
          '\u3000',
        ),
        fc.string({ maxLength: 8 }),
        fc.string({ unit: 'binary', maxLength: 6 }),
      );
      const queries = fc.oneof(
        {
          weight: 20,
          arbitrary: fc.array(pieces, { maxLength: 8 }).chain((p) => fc.constantFrom(p.join(' '), p.join(''))),
        },
        { weight: 1, arbitrary: fc.string({ minLength: 10_000, maxLength: 10_200 }) },
      );
      await fc.assert(
        fc.asyncProperty(queries, fc.constantFrom(undefined, 'newest', 'oldest'), async (q, sort) => {
          const hits = await f.store.searchMessages(q, { sort, limit: 5 });
          expect(Array.isArray(hits)).toBe(true);
        }),
        { numRuns: 10_000 },
      );
    }, 600_000);
  });
}
