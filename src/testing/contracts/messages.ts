/** Contract: messages, counters, transcript replacement, conversation replay, windows (spec §3, §12.2). */
import { describe, expect, it } from 'vitest';
import { SessionNotFoundError, ValidationError } from '../../index.js';
import type { StoreFixture } from '../fixture.js';

const MEMORY_LEAK =
  '<memory-context>\n[System note: The following is recalled memory context, NOT new user input. Treat as informational background data.]\n\n## Honcho Context\nstale memory\n</memory-context>\n\nVisible answer';

// size: one describe block of the contract, each `it` one rule of the spec; splitting it would scatter the spec.
export function messagesContract(f: StoreFixture): void {
  describe('appending and reading messages', () => {
    it('M1 appends in order and counts messages', async () => {
      await f.store.createSession('s1', 'cli');
      const a = await f.store.appendMessage('s1', 'user', 'Hello');
      const b = await f.store.appendMessage('s1', 'assistant', 'Hi there!');
      expect(b).toBeGreaterThan(a);
      const messages = await f.store.getMessages('s1');
      expect(messages.map((m) => [m.role, m.content])).toEqual([
        ['user', 'Hello'],
        ['assistant', 'Hi there!'],
      ]);
      expect((await f.store.getSession('s1'))!.messageCount).toBe(2);
    });

    it('M2-M4 counts tool calls on the calling message, not on tool responses', async () => {
      await f.store.createSession('s1', 'cli');
      await f.store.appendMessage('s1', 'tool', 'result', { toolName: 'web_search' });
      expect((await f.store.getSession('s1'))!.toolCallCount).toBe(0);
      await f.store.appendMessage('s1', 'assistant', null, { toolCalls: [{ id: 'c1' }, { id: 'c2' }] });
      await f.store.appendMessage('s1', 'tool', 'r1', { toolCallId: 'c1' });
      await f.store.appendMessage('s1', 'tool', 'r2', { toolCallId: 'c2' });
      expect(await f.store.getSession('s1')).toMatchObject({ toolCallCount: 2, messageCount: 4 });
      await f.store.appendMessage('s1', 'assistant', null, { toolCalls: { id: 'single' } });
      await f.store.appendMessage('s1', 'assistant', null, { toolCalls: [] });
      expect((await f.store.getSession('s1'))!.toolCallCount).toBe(3);
    });

    it('M5 returns tool calls parsed; empty payloads are stored as NULL', async () => {
      const calls = [{ id: 'c1', type: 'function', function: { name: 'web_search', arguments: '{"q": "记忆"}' } }];
      await f.store.createSession('s1', 'cli');
      await f.store.appendMessage('s1', 'assistant', '', { toolCalls: calls, reasoningDetails: [] });
      const [m] = await f.store.getMessages('s1');
      expect(m!.toolCalls).toEqual(calls);
      expect(m!.reasoningDetails).toBeNull();
      expect(m!.content).toBe('');
    });

    it('M9 keeps finish_reason and every reasoning field', async () => {
      await f.store.createSession('s1', 'cli');
      await f.store.appendMessage('s1', 'assistant', 'Done', {
        finishReason: 'stop',
        reasoning: 'short',
        reasoningContent: 'long',
        tokenCount: 42,
        reasoningDetails: [{ type: 'summary', text: 'x' }],
        codexReasoningItems: [{ id: 'r1' }],
        codexMessageItems: [{ id: 'm1' }],
      });
      expect((await f.store.getMessages('s1'))[0]).toMatchObject({
        finishReason: 'stop',
        reasoning: 'short',
        reasoningContent: 'long',
        tokenCount: 42,
        reasoningDetails: [{ type: 'summary', text: 'x' }],
        codexReasoningItems: [{ id: 'r1' }],
        codexMessageItems: [{ id: 'm1' }],
      });
    });

    it('keeps a token count up to 2,147,483,647 (a 32-bit integer on every backend)', async () => {
      await f.store.createSession('s1', 'cli');
      await f.store.appendMessage('s1', 'assistant', 'a', { tokenCount: 2 ** 31 - 1 });
      await f.store.appendMessages('s1', [{ role: 'assistant', content: 'b', tokenCount: -(2 ** 31) }]);
      expect((await f.store.getMessages('s1')).map((m) => m.tokenCount)).toEqual([2 ** 31 - 1, -(2 ** 31)]);
    });

    it('stores structured (multimodal) content and reads the same value back', async () => {
      const parts = [
        { type: 'text', text: 'Look at this' },
        { type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA' } },
      ];
      await f.store.createSession('s1', 'cli');
      await f.store.appendMessage('s1', 'user', parts);
      await f.store.appendMessage('s1', 'user', { kind: 'object content', n: 1 });
      expect((await f.store.getMessages('s1')).map((m) => m.content)).toEqual([
        parts,
        { kind: 'object content', n: 1 },
      ]);
    });

    it('stores any string in any message field and the system prompt exactly, NUL included; lone surrogates as U+FFFD', async () => {
      // NUL alone, inside, doubled, at the ends, beside U+FFFF/U+FFFE (the Postgres escape's own characters),
      // a plain string that looks like Hermes' structured marker, and lone surrogates.
      const nasty = [
        '\u0000',
        'a\u0000b',
        '\u0000\u0000x\u0000',
        '\uFFFF\uFFFE\u0000\uFFFF',
        '\uFFFF',
        'x\uFFFF\uFFFFy',
        '\u0000json:[1, 2]',
        '\u0000json:{"a": 1}',
        '\u0000json:not json',
      ];
      const surrogates: Array<[string, string]> = [
        ['a\ud800b', 'a\uFFFDb'],
        ['\udfff', '\uFFFD'],
        ['x\ud83d', 'x\uFFFD'],
        ['\ud83d\ude00', '\ud83d\ude00'],
      ];
      await f.store.createSession('s1', 'cli', {
        systemPrompt: 'sys\u0000tem\ud800',
        modelConfig: { 'k\u0000': ['v\u0000', '\uFFFF'] },
      });
      expect(await f.store.getSession('s1')).toMatchObject({
        systemPrompt: 'sys\u0000tem\uFFFD',
        modelConfig: { 'k\u0000': ['v\u0000', '\uFFFF'] },
      });
      await f.store.updateSystemPrompt('s1', '\u0000json:[]');
      expect((await f.store.getSession('s1'))!.systemPrompt).toBe('\u0000json:[]');
      const written: Array<[string, string]> = [...nasty.map((t): [string, string] => [t, t]), ...surrogates];
      for (const [t] of written) {
        await f.store.appendMessage('s1', 'tool', t, {
          toolName: t,
          toolCallId: t,
          finishReason: t,
          toolCalls: [{ id: t, [t]: t }],
          reasoningDetails: { [t]: [t] },
          codexReasoningItems: [t],
          codexMessageItems: [{ text: t }],
        });
        await f.store.appendMessage('s1', 'assistant', [{ type: 'text', text: t }], {
          reasoning: t,
          reasoningContent: t,
        });
      }
      const messages = await f.store.getMessages('s1');
      expect(messages).toHaveLength(written.length * 2);
      written.forEach(([, t], i) => {
        const [tool, assistant] = [messages[2 * i]!, messages[2 * i + 1]!];
        expect(tool).toMatchObject({
          content: t,
          toolName: t,
          toolCallId: t,
          finishReason: t,
          toolCalls: [{ id: t, [t]: t }],
          reasoningDetails: { [t]: [t] },
          codexReasoningItems: [t],
          codexMessageItems: [{ text: t }],
        });
        expect(assistant).toMatchObject({ content: [{ type: 'text', text: t }], reasoning: t, reasoningContent: t });
      });
      // Through replaceMessages and the conversation view too.
      await f.store.replaceMessages('s1', [
        { role: 'user', content: 'r\u0000e' },
        { role: 'assistant', content: '\u0000json:"q"', reasoning: '\u0000' },
      ]);
      expect((await f.store.getMessagesAsConversation('s1')).map((m) => m.content)).toEqual([
        'r\u0000e',
        '\u0000json:"q"',
      ]);
    });

    const searchSkip = f.skipReason('search');
    it.skipIf(searchSkip !== undefined)(
      `finds the words on both sides of a NUL, and shows NUL in the snippet and context as stored${searchSkip ? ` (skipped: ${searchSkip})` : ''}`,
      async () => {
        await f.store.createSession('s1', 'cli');
        const id = await f.store.appendMessage('s1', 'tool', 'binary\u0000garbage then needle\u0000haystack');
        await f.store.appendMessage('s1', 'user', 'nothing here');
        for (const q of ['garbage', 'needle', 'haystack', '"then needle"']) {
          const hits = await f.store.searchMessages(q);
          expect(
            hits.map((h) => h.id),
            q,
          ).toEqual([id]);
          expect(hits[0]!.context.find((c) => c.role === 'tool')!.content).toBe(
            'binary\u0000garbage then needle\u0000haystack',
          );
        }
        // Hermes' FTS5 snippet stops at a NUL (it is built with "%.*s"): only the text before it is certain.
        expect((await f.store.searchMessages('binary'))[0]!.snippet).toMatch(/^>>>binary<<</);
        expect(await f.store.searchMessages('\u0000')).toEqual([]);
      },
    );

    it('keeps timestamps in insertion order and returns messages by id', async () => {
      await f.store.createSession('s1', 'cli');
      for (const c of ['a', 'b', 'c']) await f.store.appendMessage('s1', 'user', c);
      const ts = (await f.store.getMessages('s1')).map((m) => m.timestamp);
      expect([...ts].sort((x, y) => x - y)).toEqual(ts);
      expect(new Set(ts).size).toBe(3);
    });

    it('refuses a message for an unknown session and writes nothing', async () => {
      await expect(f.store.appendMessage('ghost', 'user', 'x')).rejects.toBeInstanceOf(SessionNotFoundError);
      expect(await f.store.messageCount()).toBe(0);
      expect(await f.store.getMessages('ghost')).toEqual([]);
    });
  });

  describe('appending a batch (appendMessages)', () => {
    it('appends in order in one call, returns the ids in order, and moves the counters once', async () => {
      await f.store.createSession('b', 'cli');
      const first = await f.store.appendMessage('b', 'user', 'before');
      const ids = await f.store.appendMessages('b', [
        { role: 'user', content: 'question' },
        { role: 'assistant', content: null, toolCalls: [{ id: 'c1' }, { id: 'c2' }], reasoning: 'think' },
        { role: 'tool', content: 'result', toolCallId: 'c1', toolName: 'terminal' },
        { role: 'assistant', content: [{ type: 'text', text: 'done' }], finishReason: 'stop' },
      ]);
      expect(ids).toHaveLength(4);
      expect(ids[0]).toBeGreaterThan(first);
      expect([...ids].sort((a, b) => a - b)).toEqual(ids);
      const messages = await f.store.getMessages('b');
      expect(messages.map((m) => m.id)).toEqual([first, ...ids]);
      expect(messages.slice(1).map((m) => [m.role, m.content])).toEqual([
        ['user', 'question'],
        ['assistant', null],
        ['tool', 'result'],
        ['assistant', [{ type: 'text', text: 'done' }]],
      ]);
      expect(messages[2]).toMatchObject({ toolCalls: [{ id: 'c1' }, { id: 'c2' }], reasoning: 'think' });
      expect(messages[3]).toMatchObject({ toolCallId: 'c1', toolName: 'terminal' });
      expect(messages.every((m, i) => i === 0 || m.timestamp > messages[i - 1]!.timestamp)).toBe(true);
      expect(await f.store.getSession('b')).toMatchObject({ messageCount: 5, toolCallCount: 2 });
      expect(await f.store.appendMessages('b', [])).toEqual([]);
    });

    it('writes nothing for an unknown session or an invalid message, and handles batches past one statement', async () => {
      await f.store.createSession('b', 'cli');
      await expect(f.store.appendMessages('ghost', [{ role: 'user', content: 'x' }])).rejects.toBeInstanceOf(
        SessionNotFoundError,
      );
      await expect(
        f.store.appendMessages('b', [
          { role: 'user', content: 'ok' },
          { role: '', content: 'no role' },
        ]),
      ).rejects.toBeInstanceOf(ValidationError);
      await expect(f.store.appendMessages('b', [{ role: 'us\u0000er', content: 'x' }])).rejects.toBeInstanceOf(
        ValidationError,
      );
      await expect(f.store.appendMessages('b', [{ role: 'user', bogus: 1 } as never])).rejects.toBeInstanceOf(
        ValidationError,
      );
      expect(await f.store.messageCount()).toBe(0);
      const many = Array.from({ length: 2500 }, (_, i) => ({ role: 'user', content: `bulk ${i}` }));
      const ids = await f.store.appendMessages('b', many);
      expect(ids).toHaveLength(2500);
      expect((await f.store.getMessages('b')).map((m) => m.content)).toEqual(many.map((m) => m.content));
      expect((await f.store.getSession('b'))!.messageCount).toBe(2500);
    });
  });

  describe('replacing a transcript', () => {
    it('M19/M20 rewrites the transcript, and an empty list clears it', async () => {
      await f.store.createSession('test_session_1', 'telegram');
      for (const c of ['one', 'two', 'three', 'four']) await f.store.appendMessage('test_session_1', 'user', c);
      await f.store.replaceMessages('test_session_1', [
        { role: 'user', content: 'hello' },
        { role: 'assistant', content: 'hi', tool_calls: [{ id: 'c1' }] },
      ]);
      const after = await f.store.getMessages('test_session_1');
      expect(after.map((m) => m.content)).toEqual(['hello', 'hi']);
      expect(after[1]!.toolCalls).toEqual([{ id: 'c1' }]);
      expect(await f.store.getSession('test_session_1')).toMatchObject({ messageCount: 2, toolCallCount: 1 });
      await f.store.replaceMessages('test_session_1', []);
      expect(await f.store.getMessages('test_session_1')).toEqual([]);
      expect((await f.store.getSession('test_session_1'))!.messageCount).toBe(0);
    });

    it('keeps reasoning only on assistant messages, orders by +1 µs, defaults the role', async () => {
      await f.store.createSession('s1', 'cli');
      await f.store.replaceMessages('s1', [
        { role: 'user', content: 'q', reasoning: 'dropped' },
        { role: 'assistant', content: 'a', reasoning: 'kept', reasoningContent: '' },
        { content: 'no role' },
      ]);
      const m = await f.store.getMessages('s1');
      expect(m.map((x) => [x.role, x.reasoning, x.reasoningContent])).toEqual([
        ['user', null, null],
        ['assistant', 'kept', ''],
        ['unknown', null, null],
      ]);
      // 1 µs apart (as close as a double near 1.8e9 can say it).
      const gap = m[1]!.timestamp - m[0]!.timestamp;
      expect(gap).toBeGreaterThan(0);
      expect(gap).toBeLessThan(2e-6);
    });

    it('round-trips a conversation: getMessagesAsConversation output can be written back', async () => {
      await f.store.createSession('s1', 'cli');
      await f.store.appendMessage('s1', 'user', 'q');
      await f.store.appendMessage('s1', 'assistant', null, { toolCalls: [{ id: 'c1' }], reasoning: 'think' });
      await f.store.appendMessage('s1', 'tool', 'r', { toolCallId: 'c1', toolName: 'web' });
      const conversation = await f.store.getMessagesAsConversation('s1');
      await f.store.createSession('s2', 'cli');
      await f.store.replaceMessages('s2', conversation as unknown as Record<string, unknown>[]);
      expect(await f.store.getMessagesAsConversation('s2')).toEqual(conversation);
    });

    it('M21 is atomic: a failure part-way keeps the previous transcript', async (ctx) => {
      const failing = f.failingInsert;
      if ('skip' in failing) return ctx.skip(failing.skip);
      await f.store.createSession('s1', 'cli');
      await f.store.appendMessage('s1', 'user', 'original');
      for (const statement of failing.install) await f.raw(statement);
      try {
        await expect(
          f.store.replaceMessages('s1', [
            { role: 'user', content: 'fine' },
            { role: 'user', content: 'BOOM' },
          ]),
        ).rejects.toThrow();
      } finally {
        for (const statement of failing.remove) await f.raw(statement);
      }
      expect((await f.store.getMessages('s1')).map((m) => m.content)).toEqual(['original']);
      expect((await f.store.getSession('s1'))!.messageCount).toBe(1);
    });

    it('refuses a non-empty transcript for an unknown session; an empty one is a silent no-op', async () => {
      await expect(f.store.replaceMessages('ghost', [{ role: 'user', content: 'x' }])).rejects.toBeInstanceOf(
        SessionNotFoundError,
      );
      await f.store.replaceMessages('ghost', []);
      expect(await f.store.messageCount()).toBe(0);
    });

    it('writes a long transcript in batches', async () => {
      await f.store.createSession('long', 'cli');
      const many = Array.from({ length: 2500 }, (_, i) => ({ role: i % 2 ? 'assistant' : 'user', content: `m${i}` }));
      await f.store.replaceMessages('long', many);
      const back = await f.store.getMessages('long');
      expect(back).toHaveLength(2500);
      expect(back.map((m) => m.content)).toEqual(many.map((m) => m.content));
    });
  });

  describe('conversation replay', () => {
    it('M6 returns exactly role and content for plain messages', async () => {
      await f.store.createSession('s1', 'cli');
      await f.store.appendMessage('s1', 'user', 'Hello');
      await f.store.appendMessage('s1', 'assistant', 'Hi!');
      expect(await f.store.getMessagesAsConversation('s1')).toEqual([
        { role: 'user', content: 'Hello' },
        { role: 'assistant', content: 'Hi!' },
      ]);
    });

    it('M7/M8 prepends ancestors and drops re-sent prompts', async () => {
      await f.store.createSession('root', 'tui');
      await f.store.appendMessage('root', 'user', 'first prompt');
      await f.store.appendMessage('root', 'assistant', 'first answer');
      await f.store.createSession('child', 'tui', { parentSessionId: 'root' });
      await f.store.appendMessage('child', 'user', 'second prompt');
      await f.store.appendMessage('child', 'assistant', 'second answer');
      expect(
        (await f.store.getMessagesAsConversation('child', { includeAncestors: true })).map((m) => m.content),
      ).toEqual(['first prompt', 'first answer', 'second prompt', 'second answer']);

      await f.store.createSession('r2', 'tui');
      await f.store.appendMessage('r2', 'user', 'same prompt');
      await f.store.appendMessage('r2', 'user', 'same prompt');
      await f.store.appendMessage('r2', 'assistant', 'answer');
      await f.store.createSession('c2', 'tui', { parentSessionId: 'r2' });
      await f.store.appendMessage('c2', 'user', 'next prompt');
      const conv = await f.store.getMessagesAsConversation('c2', { includeAncestors: true });
      expect(conv.filter((m) => m.role === 'user').map((m) => m.content)).toEqual(['same prompt', 'next prompt']);
      // Without ancestors nothing is dropped.
      expect((await f.store.getMessagesAsConversation('r2')).filter((m) => m.role === 'user')).toHaveLength(2);
    });

    it('M10 strips recalled memory from assistant and user text', async () => {
      await f.store.createSession('s1', 'cli');
      await f.store.appendMessage('s1', 'assistant', MEMORY_LEAK);
      await f.store.appendMessage('s1', 'tool', `  ${MEMORY_LEAK}  `);
      const conv = await f.store.getMessagesAsConversation('s1');
      expect(conv[0]).toEqual({ role: 'assistant', content: 'Visible answer' });
      expect(conv[1]!.content).toBe(`  ${MEMORY_LEAK}  `); // tool content is left untouched
    });

    it("M11-M18 restores reasoning fields on assistant messages only, by Hermes' rules", async () => {
      await f.store.createSession('s1', 'cli');
      await f.store.appendMessage('s1', 'user', 'hi', { reasoning: 'user reasoning is never replayed' });
      await f.store.appendMessage('s1', 'assistant', null, {
        toolCalls: [{ id: 'c1' }],
        reasoning: 'I should call a tool',
        finishReason: 'tool_calls',
        reasoningDetails: [{ type: 'a' }, { type: 'b' }],
        codexReasoningItems: [{ encrypted_content: 'enc_blob_123' }],
        codexMessageItems: [{ id: 'x' }, { id: 'y' }],
      });
      await f.store.appendMessage('s1', 'tool', 'result', { toolCallId: 'c1' });
      await f.store.appendMessage('s1', 'assistant', '', {
        toolCalls: [{ id: 'c2' }],
        reasoningContent: '',
        reasoning: '',
      });
      const conv = await f.store.getMessagesAsConversation('s1');
      expect(conv).toHaveLength(4);
      expect(conv[0]).toEqual({ role: 'user', content: 'hi' });
      expect(conv[1]).toEqual({
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'c1' }],
        finish_reason: 'tool_calls',
        reasoning: 'I should call a tool',
        reasoning_details: [{ type: 'a' }, { type: 'b' }],
        codex_reasoning_items: [{ encrypted_content: 'enc_blob_123' }],
        codex_message_items: [{ id: 'x' }, { id: 'y' }],
      });
      expect(conv[2]).toEqual({ role: 'tool', content: 'result', tool_call_id: 'c1' });
      expect(conv[3]).toEqual({ role: 'assistant', content: '', tool_calls: [{ id: 'c2' }], reasoning_content: '' });
    });
  });

  describe('windows around a message', () => {
    async function session(n: number, roles: (i: number) => string = (i) => (i % 2 ? 'assistant' : 'user')) {
      await f.store.createSession('w', 'cli');
      const ids: number[] = [];
      for (let i = 0; i < n; i++) ids.push(await f.store.appendMessage('w', roles(i), `m${i}`));
      return ids;
    }

    it('returns the anchor with up to `window` neighbours each side and says how many', async () => {
      const ids = await session(10);
      const mid = await f.store.getMessagesAround('w', ids[5]!, { window: 2 });
      expect(mid.window.map((m) => m.content)).toEqual(['m3', 'm4', 'm5', 'm6', 'm7']);
      expect([mid.messagesBefore, mid.messagesAfter]).toEqual([2, 2]);
      const start = await f.store.getMessagesAround('w', ids[1]!, { window: 3 });
      expect(start.window.map((m) => m.content)).toEqual(['m0', 'm1', 'm2', 'm3', 'm4']);
      expect([start.messagesBefore, start.messagesAfter]).toEqual([1, 3]);
      const neg = await f.store.getMessagesAround('w', ids[4]!, { window: -3 });
      expect(neg.window.map((m) => m.content)).toEqual(['m4']);
      expect((await f.store.getMessagesAround('w', ids[4]!)).window).toHaveLength(10);
    });

    it('returns an empty window for an anchor outside the session', async () => {
      const ids = await session(3);
      await f.store.createSession('other', 'cli');
      expect(await f.store.getMessagesAround('other', ids[0]!)).toEqual({
        window: [],
        messagesBefore: 0,
        messagesAfter: 0,
      });
      expect(await f.store.getAnchoredView('other', ids[0]!)).toEqual({
        window: [],
        messagesBefore: 0,
        messagesAfter: 0,
        bookendStart: [],
        bookendEnd: [],
      });
    });

    it('returns the empty view for an anchor id that names no message: negative, 0, past the last, huge', async () => {
      const ids = await session(3);
      const empty = { window: [], messagesBefore: 0, messagesAfter: 0 };
      for (const anchor of [-1, -ids[0]!, 0, ids[2]! + 1000, 2 ** 31, Number.MAX_SAFE_INTEGER, 2 ** 63, 1e300]) {
        expect(await f.store.getMessagesAround('w', anchor), String(anchor)).toEqual(empty);
        expect(await f.store.getAnchoredView('w', anchor, { window: 2, bookend: 2 }), String(anchor)).toEqual({
          ...empty,
          bookendStart: [],
          bookendEnd: [],
        });
      }
    });

    it('filters the anchored view to kept roles, keeps the anchor, and adds bookends', async () => {
      const roles = (i: number) => (i % 3 === 2 ? 'tool' : i % 3 === 1 ? 'assistant' : 'user');
      const ids = await session(30, roles);
      const view = await f.store.getAnchoredView('w', ids[14]!, { window: 2, bookend: 2 });
      // Window m12..m16; m14 is a tool message but is the anchor.
      expect(view.window.map((m) => m.content)).toEqual(['m12', 'm13', 'm14', 'm15', 'm16']);
      const view2 = await f.store.getAnchoredView('w', ids[15]!, { window: 2, bookend: 2 });
      expect(view2.window.map((m) => m.content)).toEqual(['m13', 'm15', 'm16']);
      expect(view2.bookendStart.map((m) => m.content)).toEqual(['m0', 'm1']);
      expect(view2.bookendEnd.map((m) => m.content)).toEqual(['m27', 'm28']);
      const all = await f.store.getAnchoredView('w', ids[15]!, { window: 1, bookend: 1, keepRoles: null });
      expect(all.window.map((m) => m.content)).toEqual(['m14', 'm15', 'm16']);
      expect(all.bookendEnd.map((m) => m.content)).toEqual(['m29']);
      const none = await f.store.getAnchoredView('w', ids[15]!, { window: 1, bookend: 0 });
      expect([none.bookendStart, none.bookendEnd]).toEqual([[], []]);
    });

    it('skips empty-content turns in bookends but counts structured content as content', async () => {
      await f.store.createSession('b', 'cli');
      await f.store.appendMessage('b', 'assistant', '', { toolCalls: [{ id: 'c' }] });
      await f.store.appendMessage('b', 'user', [{ type: 'text', text: 'picture' }]);
      for (let i = 0; i < 5; i++) await f.store.appendMessage('b', 'user', `x${i}`);
      const last = (await f.store.getMessages('b')).at(-1)!;
      const view = await f.store.getAnchoredView('b', last.id, { window: 1, bookend: 3 });
      expect(view.bookendStart.map((m) => m.content)).toEqual([[{ type: 'text', text: 'picture' }], 'x0', 'x1']);
    });
  });
}
