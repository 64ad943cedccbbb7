/** Contract: Telegram DM topic mode (spec §8, §12.7). */
import { describe, expect, it } from 'vitest';
import { SessionNotFoundError, TopicAlreadyLinkedError } from '../../index.js';
import type { StoreFixture } from '../fixture.js';

const CHAT = '208214988';

// size: one describe block of the contract, each `it` one rule of the spec; splitting it would scatter the spec.
export function telegramContract(f: StoreFixture): void {
  describe('Telegram topic mode', () => {
    it('G6 reports disabled and unbound on a store that never used topics', async () => {
      expect(await f.store.isTelegramTopicModeEnabled({ chatId: '-100123', userId: '555' })).toBe(false);
      expect(await f.store.getTelegramTopicBinding({ chatId: '-100123', threadId: '555' })).toBeNull();
      expect(await f.store.getMeta('telegram_dm_topic_schema_version')).toBeNull();
    });

    it('G4/G5 enables for the owner only, records the topic schema version, and disables', async () => {
      await f.store.enableTelegramTopicMode({
        chatId: CHAT,
        userId: CHAT,
        hasTopicsEnabled: true,
        allowsUsersToCreateTopics: false,
      });
      expect(await f.store.getMeta('telegram_dm_topic_schema_version')).toBe('2');
      expect(await f.store.isTelegramTopicModeEnabled({ chatId: CHAT, userId: CHAT })).toBe(true);
      expect(await f.store.isTelegramTopicModeEnabled({ chatId: CHAT, userId: 'someone-else' })).toBe(false);
      await f.store.createSession('topic-sess', 'telegram');
      await f.store.bindTelegramTopic({
        chatId: CHAT,
        threadId: '17585',
        userId: CHAT,
        sessionKey: 'k',
        sessionId: 'topic-sess',
      });
      await f.store.disableTelegramTopicMode({ chatId: CHAT, clearBindings: true });
      expect(await f.store.isTelegramTopicModeEnabled({ chatId: CHAT, userId: CHAT })).toBe(false);
      expect(await f.store.getTelegramTopicBinding({ chatId: CHAT, threadId: '17585' })).toBeNull();
      // Enabling again keeps working.
      await f.store.enableTelegramTopicMode({ chatId: CHAT, userId: CHAT });
      expect(await f.store.isTelegramTopicModeEnabled({ chatId: CHAT, userId: CHAT })).toBe(true);
    });

    it('keeps bindings when disabling without clearing them', async () => {
      await f.store.enableTelegramTopicMode({ chatId: CHAT, userId: CHAT });
      await f.store.createSession('s', 'telegram');
      await f.store.bindTelegramTopic({ chatId: CHAT, threadId: '1', userId: CHAT, sessionKey: 'k', sessionId: 's' });
      await f.store.disableTelegramTopicMode({ chatId: CHAT, clearBindings: false });
      expect(await f.store.getTelegramTopicBinding({ chatId: CHAT, threadId: '1' })).not.toBeNull();
    });

    it('G8/G10 binds a topic (numbers become strings) and round-trips every field', async () => {
      await f.store.createSession('old-session', 'telegram');
      await f.store.bindTelegramTopic({
        chatId: 208214988,
        threadId: 17585,
        userId: 208214988,
        sessionKey: 'agent:main:telegram:dm:208214988:17585',
        sessionId: 'old-session',
      });
      const binding = await f.store.getTelegramTopicBinding({ chatId: CHAT, threadId: 17585 });
      expect(binding).toMatchObject({
        chatId: CHAT,
        threadId: '17585',
        userId: CHAT,
        sessionKey: 'agent:main:telegram:dm:208214988:17585',
        sessionId: 'old-session',
        managedMode: 'auto',
      });
      expect(binding!.linkedAt).toBe(binding!.updatedAt);
      expect(await f.store.getMeta('telegram_dm_topic_schema_version')).toBe('2');
      expect(await f.store.isTelegramSessionLinkedToTopic({ sessionId: 'old-session' })).toBe(true);
      expect(await f.store.isTelegramSessionLinkedToTopic({ sessionId: 'other' })).toBe(false);
    });

    it('G9 refuses to link a session to a second topic', async () => {
      await f.store.createSession('linked-session', 'telegram');
      await f.store.bindTelegramTopic({
        chatId: CHAT,
        threadId: '11111',
        userId: CHAT,
        sessionKey: 'k1',
        sessionId: 'linked-session',
      });
      const error = await f.store
        .bindTelegramTopic({
          chatId: CHAT,
          threadId: '17585',
          userId: CHAT,
          sessionKey: 'k2',
          sessionId: 'linked-session',
        })
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(TopicAlreadyLinkedError);
      expect((error as Error).message).toMatch(/already linked/);
      expect(await f.store.getTelegramTopicBinding({ chatId: CHAT, threadId: '17585' })).toBeNull();
    });

    it('G11 re-binds a topic to a new session, keeping linked_at; re-binding the same pair is idempotent', async () => {
      await f.store.createSession('old-topic-session', 'telegram');
      await f.store.createSession('new-topic-session', 'telegram');
      await f.store.bindTelegramTopic({
        chatId: CHAT,
        threadId: '7',
        userId: CHAT,
        sessionKey: 'k',
        sessionId: 'old-topic-session',
      });
      await f.store.bindTelegramTopic({
        chatId: CHAT,
        threadId: '7',
        userId: CHAT,
        sessionKey: 'k',
        sessionId: 'old-topic-session',
      });
      const first = await f.store.getTelegramTopicBinding({ chatId: CHAT, threadId: '7' });
      await f.store.bindTelegramTopic({
        chatId: CHAT,
        threadId: '7',
        userId: CHAT,
        sessionKey: 'k2',
        sessionId: 'new-topic-session',
        managedMode: 'restored',
      });
      const second = await f.store.getTelegramTopicBinding({ chatId: CHAT, threadId: '7' });
      expect(second).toMatchObject({
        sessionId: 'new-topic-session',
        sessionKey: 'k2',
        managedMode: 'restored',
        linkedAt: first!.linkedAt,
      });
      expect(second!.updatedAt).toBeGreaterThan(first!.updatedAt);
      expect(await f.store.isTelegramSessionLinkedToTopic({ sessionId: 'old-topic-session' })).toBe(false);
    });

    it('refuses to bind an unknown session and writes nothing', async () => {
      await expect(
        f.store.bindTelegramTopic({ chatId: CHAT, threadId: '9', userId: CHAT, sessionKey: 'k', sessionId: 'ghost' }),
      ).rejects.toBeInstanceOf(SessionNotFoundError);
      expect(await f.store.getTelegramTopicBinding({ chatId: CHAT, threadId: '9' })).toBeNull();
      expect(await f.store.getMeta('telegram_dm_topic_schema_version')).toBeNull();
    });

    it('G1 drops the binding with its session', async () => {
      await f.store.createSession('sess-to-delete', 'telegram');
      await f.store.bindTelegramTopic({
        chatId: CHAT,
        threadId: '17585',
        userId: CHAT,
        sessionKey: 'k',
        sessionId: 'sess-to-delete',
      });
      expect(await f.store.deleteSession('sess-to-delete')).toBe(true);
      expect(await f.store.getTelegramTopicBinding({ chatId: CHAT, threadId: '17585' })).toBeNull();
    });

    it("G7 lists the user's unlinked Telegram sessions, most recent first, with preview", async () => {
      await f.store.createSession('old-unlinked', 'telegram', { userId: CHAT });
      await f.store.setSessionTitle('old-unlinked', 'Old research');
      await f.store.appendMessage('old-unlinked', 'user', 'first prompt');
      await f.store.createSession('already-linked', 'telegram', { userId: CHAT });
      await f.store.bindTelegramTopic({
        chatId: CHAT,
        threadId: '11111',
        userId: CHAT,
        sessionKey: 'k',
        sessionId: 'already-linked',
      });
      await f.store.createSession('other-user', 'telegram', { userId: '999' });
      await f.store.createSession('cli-session', 'cli', { userId: CHAT });
      await f.store.createSession('newer-unlinked', 'telegram', { userId: CHAT });
      const listed = await f.store.listUnlinkedTelegramSessionsForUser({ chatId: CHAT, userId: CHAT, limit: 10 });
      expect(listed.map((s) => s.id)).toEqual(['newer-unlinked', 'old-unlinked']);
      expect(listed[1]).toMatchObject({ title: 'Old research', preview: 'first prompt' });
      expect(await f.store.listUnlinkedTelegramSessionsForUser({ userId: CHAT, limit: 1 })).toHaveLength(1);
    });
  });
}
