/**
 * Contract: every public method refuses bad input with a ValidationError naming the field, and writes
 * nothing. The list of methods is the public contract; a method without a case fails the suite.
 */
import { describe, expect, it } from 'vitest';
import { type SessionStore, ValidationError } from '../../index.js';
import type { StoreFixture } from '../fixture.js';

/** The SessionDBProvider contract, as listed in the repositories issue. */
export const CONTRACT_METHODS = [
  'createSession',
  'ensureSession',
  'getSession',
  'resolveSessionId',
  'endSession',
  'reopenSession',
  'updateSystemPrompt',
  'updateTokenCounts',
  'deleteSession',
  'clearMessages',
  'pruneSessions',
  'vacuum',
  'maybeAutoPruneAndVacuum',
  'setSessionTitle',
  'getSessionTitle',
  'getSessionByTitle',
  'resolveSessionByTitle',
  'getNextTitleInLineage',
  'appendMessage',
  'replaceMessages',
  'getMessages',
  'getMessagesAsConversation',
  'getMessagesAround',
  'getAnchoredView',
  'getCompressionTip',
  'resolveResumeSessionId',
  'getLineage',
  'getDescendants',
  'listSessionsRich',
  'sessionCount',
  'messageCount',
  'getMeta',
  'setMeta',
  'requestHandoff',
  'getHandoffState',
  'listPendingHandoffs',
  'claimHandoff',
  'completeHandoff',
  'failHandoff',
  'exportSession',
  'exportAll',
  'enableTelegramTopicMode',
  'disableTelegramTopicMode',
  'isTelegramTopicModeEnabled',
  'getTelegramTopicBinding',
  'bindTelegramTopic',
  'isTelegramSessionLinkedToTopic',
  'listUnlinkedTelegramSessionsForUser',
  'searchMessages',
  'searchSessions',
  'close',
] as const;

/** Methods that take no input to validate (nothing to get wrong), with the reason. */
const NO_INPUT: Record<string, string> = {
  vacuum: 'takes no arguments',
  listPendingHandoffs: 'takes no arguments',
  close: 'takes no arguments',
};

type Case = [method: (typeof CONTRACT_METHODS)[number], field: string, call: (s: SessionStore) => Promise<unknown>];
// Deliberately wrong types go through `bad` so the cases read as what a JavaScript caller could pass.
const bad = (v: unknown) => v as never;
const LONE_SURROGATE = 'x\ud800y';

const CASES: Case[] = [
  ['createSession', 'sessionId', (s) => s.createSession(bad(123), 'cli')],
  ['createSession', 'sessionId', (s) => s.createSession('', 'cli')],
  ['createSession', 'sessionId', (s) => s.createSession('a\u0000b', 'cli')],
  ['createSession', 'sessionId', (s) => s.createSession(LONE_SURROGATE, 'cli')],
  ['createSession', 'sessionId', (s) => s.createSession('x'.repeat(1025), 'cli')],
  ['createSession', 'source', (s) => s.createSession('new', bad(null))],
  ['createSession', 'options', (s) => s.createSession('new', 'cli', bad({ bogus: 1 }))],
  [
    'createSession',
    'options.modelConfig',
    (s) => s.createSession('new', 'cli', { modelConfig: bad({ t: Number.NaN }) }),
  ],
  ['createSession', 'options.modelConfig', (s) => s.createSession('new', 'cli', { modelConfig: bad(new Date()) })],
  ['createSession', 'options.modelConfig', (s) => s.createSession('new', 'cli', { modelConfig: { k: [1n] } as never })],
  ['createSession', 'options.parentSessionId', (s) => s.createSession('new', 'cli', { parentSessionId: '' })],
  ['createSession', 'options.parentSessionId', (s) => s.createSession('seed', 'cli', { parentSessionId: 'seed' })],
  ['ensureSession', 'sessionId', (s) => s.ensureSession(bad(undefined))],
  ['getSession', 'sessionId', (s) => s.getSession(bad(5))],
  ['resolveSessionId', 'idOrPrefix', (s) => s.resolveSessionId(bad(undefined))],
  ['endSession', 'endReason', (s) => s.endSession('seed', bad(5))],
  ['reopenSession', 'sessionId', (s) => s.reopenSession(bad({}))],
  ['updateSystemPrompt', 'systemPrompt', (s) => s.updateSystemPrompt('seed', bad(5))],
  ['updateTokenCounts', 'options.inputTokens', (s) => s.updateTokenCounts('seed', { inputTokens: 1.5 })],
  [
    'updateTokenCounts',
    'options.apiCallCount',
    (s) => s.updateTokenCounts('seed', { apiCallCount: Number.MAX_SAFE_INTEGER + 1 }),
  ],
  [
    'updateTokenCounts',
    'options.reasoningTokens',
    (s) => s.updateTokenCounts('seed', { reasoningTokens: 2 ** 53, absolute: true }),
  ],
  [
    'updateTokenCounts',
    'options.estimatedCostUsd',
    (s) => s.updateTokenCounts('seed', { estimatedCostUsd: Number.POSITIVE_INFINITY }),
  ],
  ['updateTokenCounts', 'options.absolute', (s) => s.updateTokenCounts('seed', { absolute: bad('yes') })],
  ['updateTokenCounts', 'options', (s) => s.updateTokenCounts('seed', bad({ input_tokens: 5 }))],
  ['deleteSession', 'sessionId', (s) => s.deleteSession(bad(null))],
  ['clearMessages', 'sessionId', (s) => s.clearMessages(bad(1))],
  ['pruneSessions', 'options.olderThanDays', (s) => s.pruneSessions({ olderThanDays: -1 })],
  ['pruneSessions', 'options', (s) => s.pruneSessions(bad({ older_than_days: 1 }))],
  ['maybeAutoPruneAndVacuum', 'options.retentionDays', (s) => s.maybeAutoPruneAndVacuum({ retentionDays: bad('x') })],
  ['setSessionTitle', 'title', (s) => s.setSessionTitle('seed', bad(5))],
  ['setSessionTitle', 'title', (s) => s.setSessionTitle('seed', 'x'.repeat(101))],
  ['setSessionTitle', 'title', (s) => s.setSessionTitle('seed', LONE_SURROGATE)],
  ['getSessionTitle', 'sessionId', (s) => s.getSessionTitle(bad(5))],
  ['getSessionByTitle', 'title', (s) => s.getSessionByTitle(bad(null))],
  ['resolveSessionByTitle', 'title', (s) => s.resolveSessionByTitle(bad(1))],
  ['getNextTitleInLineage', 'baseTitle', (s) => s.getNextTitleInLineage(bad(undefined))],
  ['appendMessage', 'role', (s) => s.appendMessage('seed', '', 'x')],
  ['appendMessage', 'content', (s) => s.appendMessage('seed', 'user', bad(5))],
  // Identifiers still refuse NUL and lone surrogates (message text accepts them: see messages.contract.ts).
  ['appendMessage', 'role', (s) => s.appendMessage('seed', 'us\u0000er', 'x')],
  ['appendMessage', 'role', (s) => s.appendMessage('seed', LONE_SURROGATE, 'x')],
  [
    'appendMessage',
    'options.toolCalls',
    (s) => s.appendMessage('seed', 'assistant', null, { toolCalls: bad(() => 1) }),
  ],
  ['appendMessage', 'options.tokenCount', (s) => s.appendMessage('seed', 'user', 'x', { tokenCount: bad('a') })],
  ['appendMessage', 'options', (s) => s.appendMessage('seed', 'user', 'x', bad({ tool_calls: [] }))],
  // A message's token count is a 32-bit integer everywhere (Postgres' column is integer).
  ['appendMessage', 'options.tokenCount', (s) => s.appendMessage('seed', 'user', 'x', { tokenCount: 2 ** 31 })],
  ['appendMessage', 'options.tokenCount', (s) => s.appendMessage('seed', 'user', 'x', { tokenCount: 3e9 })],
  ['appendMessage', 'options.tokenCount', (s) => s.appendMessage('seed', 'user', 'x', { tokenCount: -(2 ** 31) - 1 })],
  [
    'replaceMessages',
    'messages.0.tokenCount',
    (s) => s.replaceMessages('seed', [{ role: 'user', content: 'x', token_count: 2 ** 31 }]),
  ],
  ['replaceMessages', 'messages', (s) => s.replaceMessages('seed', bad('nope'))],
  ['replaceMessages', 'messages.0.content', (s) => s.replaceMessages('seed', [{ role: 'user', content: 5 }])],
  [
    'replaceMessages',
    'messages.1',
    (s) => s.replaceMessages('seed', [{ role: 'user' }, { tool_calls: [1], toolCalls: [2] }]),
  ],
  ['getMessages', 'sessionId', (s) => s.getMessages(bad(1))],
  [
    'getMessagesAsConversation',
    'options.includeAncestors',
    (s) => s.getMessagesAsConversation('seed', { includeAncestors: bad('yes') }),
  ],
  ['getMessagesAround', 'anchorId', (s) => s.getMessagesAround('seed', bad('x'))],
  ['getMessagesAround', 'anchorId', (s) => s.getMessagesAround('seed', 1.5)],
  ['getAnchoredView', 'anchorId', (s) => s.getAnchoredView('seed', Number.NaN)],
  ['getMessagesAround', 'options.window', (s) => s.getMessagesAround('seed', 1, { window: bad('a') })],
  ['getAnchoredView', 'options.keepRoles', (s) => s.getAnchoredView('seed', 1, { keepRoles: bad('user') })],
  ['getCompressionTip', 'sessionId', (s) => s.getCompressionTip(bad(1))],
  ['resolveResumeSessionId', 'sessionId', (s) => s.resolveResumeSessionId(bad(5))],
  ['getLineage', 'sessionId', (s) => s.getLineage(bad(1))],
  ['getDescendants', 'sessionId', (s) => s.getDescendants(bad([]))],
  ['listSessionsRich', 'options.limit', (s) => s.listSessionsRich({ limit: 1.5 })],
  ['listSessionsRich', 'options.offset', (s) => s.listSessionsRich({ offset: -1 })],
  ['listSessionsRich', 'options.excludeSources', (s) => s.listSessionsRich({ excludeSources: bad('tool') })],
  ['sessionCount', 'options.source', (s) => s.sessionCount({ source: bad(1) })],
  ['messageCount', 'options.sessionId', (s) => s.messageCount({ sessionId: bad(2) })],
  ['getMeta', 'key', (s) => s.getMeta('')],
  ['setMeta', 'value', (s) => s.setMeta('k', bad(5))],
  ['setMeta', 'key', (s) => s.setMeta(bad(null), 'v')],
  ['requestHandoff', 'platform', (s) => s.requestHandoff('seed', '')],
  ['getHandoffState', 'sessionId', (s) => s.getHandoffState(bad(1))],
  ['claimHandoff', 'sessionId', (s) => s.claimHandoff(bad(1))],
  ['completeHandoff', 'sessionId', (s) => s.completeHandoff(bad(1))],
  ['failHandoff', 'error', (s) => s.failHandoff('seed', bad(5))],
  ['exportSession', 'sessionId', (s) => s.exportSession(bad(1))],
  ['exportAll', 'options.source', (s) => s.exportAll({ source: bad(2) })],
  ['enableTelegramTopicMode', 'options.chatId', (s) => s.enableTelegramTopicMode({ chatId: '', userId: 'u' })],
  ['enableTelegramTopicMode', 'options.chatId', (s) => s.enableTelegramTopicMode({ chatId: 1.5, userId: 1 })],
  [
    'enableTelegramTopicMode',
    'options.hasTopicsEnabled',
    (s) => s.enableTelegramTopicMode({ chatId: 1, userId: 1, hasTopicsEnabled: bad(1) }),
  ],
  ['disableTelegramTopicMode', 'options.chatId', (s) => s.disableTelegramTopicMode(bad({}))],
  ['isTelegramTopicModeEnabled', 'options.userId', (s) => s.isTelegramTopicModeEnabled(bad({ chatId: 'c' }))],
  [
    'getTelegramTopicBinding',
    'options.threadId',
    (s) => s.getTelegramTopicBinding({ chatId: 'c', threadId: bad(null) }),
  ],
  [
    'bindTelegramTopic',
    'options.sessionKey',
    (s) => s.bindTelegramTopic(bad({ chatId: 1, threadId: 2, userId: 3, sessionId: 'seed' })),
  ],
  ['isTelegramSessionLinkedToTopic', 'options.sessionId', (s) => s.isTelegramSessionLinkedToTopic(bad({}))],
  ['searchMessages', 'query', (s) => s.searchMessages(bad(5))],
  ['searchMessages', 'options.sourceFilter', (s) => s.searchMessages('x', { sourceFilter: bad('cli') })],
  ['searchMessages', 'options.sort', (s) => s.searchMessages('x', { sort: bad(1) })],
  // Hermes sorts by relevance for any unknown value, which hid typos: refused here.
  ['searchMessages', 'options.sort', (s) => s.searchMessages('x', { sort: bad('newst') })],
  ['searchMessages', 'options.sort', (s) => s.searchMessages('x', { sort: bad('') })],
  ['searchSessions', 'options.limit', (s) => s.searchSessions({ limit: bad('x') })],
  [
    'listUnlinkedTelegramSessionsForUser',
    'options.limit',
    (s) => s.listUnlinkedTelegramSessionsForUser({ userId: 'u', limit: bad('x') }),
  ],
];

export function validationContract(f: StoreFixture): void {
  describe('bad input', () => {
    it('has a case for every contract method that takes input', () => {
      const covered = new Set(CASES.map(([method]) => method));
      const missing = CONTRACT_METHODS.filter((m) => !covered.has(m) && !(m in NO_INPUT));
      expect(missing).toEqual([]);
      for (const m of CONTRACT_METHODS)
        expect(typeof (f.store as unknown as Record<string, unknown>)[m], m).toBe('function');
    });

    it('throws ValidationError naming the field, and changes nothing', async () => {
      await f.store.createSession('seed', 'cli', { model: 'm' });
      await f.store.appendMessage('seed', 'user', 'hello');
      await f.store.setMeta('k', 'v');
      const fingerprint = async () =>
        JSON.stringify([
          await f.store.exportAll(),
          await f.store.getMeta('k'),
          await f.store.getMeta('telegram_dm_topic_schema_version'),
        ]);
      const before = await fingerprint();
      const failures: string[] = [];
      for (const [method, field, call] of CASES) {
        const error = await call(f.store).then(
          () => undefined,
          (e: unknown) => e,
        );
        if (!(error instanceof ValidationError)) failures.push(`${method} (${field}): ${String(error) || 'no error'}`);
        else if (error.field !== field) failures.push(`${method}: field ${error.field}, expected ${field}`);
      }
      expect(failures).toEqual([]);
      expect(await fingerprint()).toBe(before);
    });
  });
}
