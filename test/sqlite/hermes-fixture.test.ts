/**
 * A state.db written by the Python reference, read through the facade with { migrate: false }: every
 * session and message must come back as the file holds it (decoded the way Hermes decodes it).
 */
import fs from 'node:fs';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type SessionStore, openStore } from '../../src/index.js';
import { copyFixture, sharedFixture } from '../helpers/fixtures.js';

const fixture = sharedFixture('hermes-v11-small.db');
const manifestFile = sharedFixture('hermes-v11-small.manifest.json');
const skip = fixture.missing ?? manifestFile.missing;
const reason = skip ? ` (skipped: ${skip})` : '';

type Raw = Record<string, unknown>;
const camel = (k: string) => k.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase());
const parse = (v: unknown) => (typeof v === 'string' ? JSON.parse(v) : v);

/** What the facade should return for a raw row, written from the spec's description of Hermes' decoding. */
function expectedSession(row: Raw) {
  const out: Raw = {};
  for (const [k, v] of Object.entries(row)) out[camel(k)] = v;
  out.modelConfig = parse(row.model_config);
  return out;
}

function expectedMessage(row: Raw) {
  const out: Raw = {};
  for (const [k, v] of Object.entries(row)) out[camel(k)] = v;
  const content = row.content;
  out.content =
    typeof content === 'string' && content.startsWith('\u0000json:') ? JSON.parse(content.slice(6)) : content;
  for (const k of ['tool_calls', 'reasoning_details', 'codex_reasoning_items', 'codex_message_items'])
    out[camel(k)] = parse(row[k]);
  return out;
}

describe.skipIf(skip !== undefined)(`the Python reference's state.db through the facade${reason}`, () => {
  let store: SessionStore;
  let raw: Database.Database;
  let manifest: {
    counts: { sessions: number; messages: number };
    sessions: Record<string, string | string[]>;
    messages: Record<string, number>;
    telegram_topic: { chat_id: string; user_id: string; bindings: Record<string, string> };
  };

  beforeAll(async () => {
    const copy = copyFixture(fixture.path!);
    raw = new Database(fixture.path!, { readonly: true });
    manifest = JSON.parse(fs.readFileSync(manifestFile.path!, 'utf8'));
    store = await openStore(`sqlite:${copy}`, { migrate: false });
  });
  afterAll(async () => {
    await store?.close();
    raw?.close();
  });

  it('returns every session and message exactly as stored', async () => {
    const rawSessions = raw.prepare('SELECT * FROM sessions ORDER BY id').all() as Raw[];
    const rawMessages = raw.prepare('SELECT * FROM messages ORDER BY id').all() as Raw[];
    expect(rawSessions).toHaveLength(manifest.counts.sessions);
    expect(rawMessages).toHaveLength(manifest.counts.messages);
    for (const row of rawSessions) {
      expect(await store.getSession(String(row.id)), String(row.id)).toEqual(expectedSession(row));
      const expected = rawMessages.filter((m) => m.session_id === row.id).map(expectedMessage);
      expect(await store.getMessages(String(row.id)), `messages of ${String(row.id)}`).toEqual(expected);
    }
    expect(await store.sessionCount()).toBe(manifest.counts.sessions);
    expect(await store.messageCount()).toBe(manifest.counts.messages);
    const exported = await store.exportAll();
    expect(exported.reduce((n, s) => n + s.messages.length, 0)).toBe(manifest.counts.messages);
  });

  it('decodes multimodal content into parts', async () => {
    const id = manifest.messages.multimodal_user!;
    const session = manifest.sessions.multimodal as string;
    const message = (await store.getMessages(session)).find((m) => m.id === id)!;
    expect(Array.isArray(message.content)).toBe(true);
    expect((message.content as Array<{ type: string }>).some((p) => p.type === 'text')).toBe(true);
  });

  it('replays the conversation without leaked memory context', async () => {
    const id = manifest.messages.memory_context_leak!;
    const sessionId = String(raw.prepare('SELECT session_id FROM messages WHERE id = ?').pluck().get(id));
    const rawContent = String(raw.prepare('SELECT content FROM messages WHERE id = ?').pluck().get(id));
    expect(rawContent).toMatch(/memory-context/i);
    const conversation = await store.getMessagesAsConversation(sessionId);
    expect(JSON.stringify(conversation)).not.toMatch(/<\s*memory-context/i);
  });

  it('reads the lineage, handoff and Telegram topic rows the manifest describes', async () => {
    const docker = manifest.sessions.lineage_docker as string[];
    expect(await store.getLineage(docker.at(-1)!)).toEqual(docker);
    expect(await store.getCompressionTip(docker[0]!)).toBe(docker.at(-1));
    expect((await store.getHandoffState(manifest.sessions.handoff_pending as string))!.state).toBe('pending');
    expect((await store.getHandoffState(manifest.sessions.handoff_failed as string))!.state).toBe('failed');
    expect((await store.getHandoffState(manifest.sessions.handoff_completed as string))!.state).toBe('completed');
    expect((await store.listPendingHandoffs()).map((s) => s.id)).toContain(manifest.sessions.handoff_pending);
    const topic = manifest.telegram_topic;
    for (const [thread, sessionId] of Object.entries(topic.bindings)) {
      expect(await store.getTelegramTopicBinding({ chatId: topic.chat_id, threadId: thread })).toMatchObject({
        sessionId,
      });
    }
    expect(await store.isTelegramTopicModeEnabled({ chatId: topic.chat_id, userId: topic.user_id })).toBe(true);
    expect(await store.getMeta('telegram_dm_topic_schema_version')).toBe('2');
  });
});
