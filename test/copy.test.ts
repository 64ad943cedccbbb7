/**
 * Copying between stores: SQLite → Postgres (PGlite and the real server) → SQLite keeps every id, time
 * (to the microsecond), JSON value, structured content, title, parent link, handoff state, meta and
 * Telegram topic row; a second copy adds nothing; a target holding other rows under the same ids is
 * refused; NUL, which Postgres cannot store, is refused or replaced as asked.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { main } from '../src/cli/main.js';
import { roundToMicros } from '../src/codecs/time.js';
import {
  ImportError,
  type SessionStore,
  TransferRefusedError,
  copyStore,
  importHermesStateDb,
  openStore,
  verifyStores,
} from '../src/index.js';
import { type Harness, pgliteHarness, postgresHarness, reportAvailability, sqliteFileHarness } from './backends.js';
import { sharedFixture } from './helpers/fixtures.js';
import { HERMES_V11_DDL } from './helpers/hermes-schema.js';

const fixture = sharedFixture('hermes-v11-small.db');
const sqlite = sqliteFileHarness();
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hsdb-copy-test-'));
afterAll(async () => {
  await sqlite.cleanup();
  fs.rmSync(dir, { recursive: true, force: true });
});

/** Sessions and messages of every shape the API can write, with wall-clock (microsecond) times. */
async function populate(store: SessionStore): Promise<void> {
  await store.createSession('root', 'telegram', {
    model: 'gpt-5',
    modelConfig: { temperature: 0.2, zeta: [1, 'two', null], alpha: { b: true } },
    systemPrompt: 'be brief',
    userId: 'u1',
  });
  await store.setSessionTitle('root', 'Deploy notes');
  await store.appendMessage('root', 'user', 'how do I deploy the ingress controller?');
  await store.appendMessage(
    'root',
    'assistant',
    [
      { type: 'text', text: 'Use helm' },
      { type: 'image_url', image_url: { url: 'data:x' } },
    ],
    {
      reasoning: 'think',
      reasoningContent: 'deeper',
      reasoningDetails: [{ type: 'summary', text: 'ok' }],
      finishReason: 'stop',
      tokenCount: 42,
      codexReasoningItems: [{ id: 'r1' }],
      codexMessageItems: { z: 1, a: 2 },
    },
  );
  await store.appendMessage('root', 'assistant', null, {
    toolCalls: [{ id: 'call_1', function: { name: 'terminal', arguments: '{"cmd": "kubectl get pods"}' } }],
  });
  await store.appendMessage('root', 'tool', '{"output": "pod/web-1 Running"}', {
    toolCallId: 'call_1',
    toolName: 'terminal',
  });
  await store.updateTokenCounts('root', {
    inputTokens: 1200,
    outputTokens: 345,
    cacheReadTokens: 7,
    estimatedCostUsd: 0.0123456789,
    actualCostUsd: 0.1 + 0.2,
    costStatus: 'final',
    billingProvider: 'openai',
  });
  await store.endSession('root', 'compression');
  await store.createSession('child', 'telegram', { parentSessionId: 'root' });
  await store.setSessionTitle('child', 'Deploy notes #2');
  await store.appendMessage('child', 'user', '记忆断裂 after compression — über ünïcødé 🚀');
  await store.requestHandoff('child', 'discord');
  await store.claimHandoff('child');
  await store.createSession('cron-1', 'cron');
  await store.appendMessage('cron-1', 'system', '');
  await store.requestHandoff('cron-1', 'slack');
  await store.failHandoff('cron-1', 'slack is down');
  await store.setMeta('telegram_dm_topic_schema_version', '2');
  await store.setMeta('custom', 'value with "quotes"');
  await store.enableTelegramTopicMode({
    chatId: '1001',
    userId: '77',
    hasTopicsEnabled: true,
    allowsUsersToCreateTopics: false,
  });
  await store.bindTelegramTopic({
    chatId: '1001',
    threadId: '5',
    userId: '77',
    sessionKey: 'agent:main:telegram:dm:1001:5',
    sessionId: 'child',
  });
}

/** Everything the API returns for a store, with times at the microsecond Postgres keeps. */
async function snapshotOf(store: SessionStore) {
  const micros = <T extends object>(row: T): T => {
    const out = { ...row } as Record<string, unknown>;
    for (const k of [
      'startedAt',
      'endedAt',
      'timestamp',
      'lastActive',
      'linkedAt',
      'updatedAt',
      'activatedAt',
      'capabilityCheckedAt',
    ]) {
      if (typeof out[k] === 'number') out[k] = roundToMicros(out[k] as number);
    }
    return out as T;
  };
  const sessions = (await store.exportAll()).map((s) => micros({ ...s, messages: s.messages.map(micros) }));
  sessions.sort((a, b) => a.id.localeCompare(b.id));
  const bindings = await store.bulkRead.topicBindings();
  const modes = await store.bulkRead.topicModes();
  return {
    sessions,
    meta: await store.bulkRead.meta(),
    bindings: bindings.map((b) => ({
      ...b,
      linked_at: roundToMicros(b.linked_at as number),
      updated_at: roundToMicros(b.updated_at as number),
    })),
    modes: modes.map((m) => ({
      chat: m.chat_id,
      user: m.user_id,
      enabled: Boolean(m.enabled),
      topics: Boolean(m.has_topics_enabled),
      create: Boolean(m.allows_users_to_create_topics),
      at: roundToMicros(m.activated_at as number),
    })),
    handoffs: await Promise.all(['root', 'child', 'cron-1'].map((id) => store.getHandoffState(id))),
    lineage: await store.getLineage('child'),
    // The same messages are found (compared as sets: order is the search tests' business).
    search: (await store.searchMessages('ingress', { limit: -1 })).map((h) => h.id).sort((x, y) => x - y),
    cjk: (await store.searchMessages('记忆', { limit: -1 })).map((h) => h.id).sort((x, y) => x - y),
  };
}

const pgHarnesses: Harness[] = [pgliteHarness(), await postgresHarness()];

for (const pg of pgHarnesses) {
  const available = reportAvailability(pg);
  describe.skipIf(!available)(`copy sqlite ↔ ${pg.name}${available ? '' : ` (skipped: ${pg.unavailable})`}`, () => {
    afterAll(() => pg.cleanup());

    it('round-trips sqlite → postgres → sqlite without losing anything, and a second copy adds nothing', async () => {
      const a = await sqlite.open();
      const b = await pg.open();
      const c = await sqlite.open();
      try {
        // The Python-written fixture first (its ids are kept), then every shape the API writes.
        if (!fixture.missing) await importHermesStateDb(fixture.path!, a);
        await populate(a);
        const before = await snapshotOf(a);
        expect(before.sessions.length).toBeGreaterThanOrEqual(3);

        const there = await copyStore(a, b, { verify: true });
        expect(there.verification?.problems).toEqual([]);
        expect(there.verification?.spotChecks.length).toBeGreaterThan(0);
        const back = await copyStore(b, c, { verify: true });
        expect(back.verification?.problems).toEqual([]);
        expect(back).toMatchObject({ sessions: before.sessions.length, topicBindings: before.bindings.length });

        const middle = await snapshotOf(b);
        const after = await snapshotOf(c);
        expect(middle).toEqual(before);
        expect(after).toEqual(before);
        // Exact message ids and the structured content's shape survive both hops.
        const root = after.sessions.find((s) => s.id === 'root')!;
        expect(root.messages[1]!.content).toEqual([
          { type: 'text', text: 'Use helm' },
          { type: 'image_url', image_url: { url: 'data:x' } },
        ]);
        expect(root.actualCostUsd).toBe(0.1 + 0.2);
        expect(root.title).toBe('Deploy notes');

        // Running it again changes nothing; both targets hand out fresh ids past the copied ones.
        const again = await copyStore(a, b, { verify: true });
        expect(again.verification?.ok).toBe(true);
        expect(await b.messageCount()).toBe(await a.messageCount());
        const maxId = Math.max(...before.sessions.flatMap((s) => s.messages.map((m) => m.id)));
        expect(await b.appendMessage('root', 'user', 'new on postgres')).toBeGreaterThan(maxId);
        expect(await c.appendMessage('root', 'user', 'new on sqlite')).toBeGreaterThan(maxId);
        const diverged = await verifyStores(a, b);
        expect(diverged.ok).toBe(false);
        expect(diverged.problems.join('\n')).toMatch(/session root: 4 messages, 5 in the target/);
      } finally {
        await Promise.all([a.close(), b.close(), c.close()]);
      }
    }, 120_000);

    it('refuses a target holding different rows under the same ids, writing nothing, unless told to keep them', async () => {
      const a = await sqlite.open();
      const b = await pg.open();
      try {
        await populate(a);
        await b.createSession('child', 'cli');
        const error = await copyStore(a, b).catch((e: unknown) => e);
        expect(error).toBeInstanceOf(TransferRefusedError);
        expect((error as Error).message).toMatch(/session child/);
        expect(await b.sessionCount()).toBe(1);
        const kept = await copyStore(a, b, { onConflict: 'keep-target' });
        expect(kept.sessions).toBe(3);
        expect((await b.getSession('child'))!.source).toBe('cli');
        expect(await b.messageCount()).toBe(await a.messageCount());
      } finally {
        await Promise.all([a.close(), b.close()]);
      }
    });

    // Three fresh PGlite (or Postgres) stores and two SQLite files: on a busy 2-core machine, past the 30 s default.
    it('keeps NUL in message text and JSON exactly by default, refuses it in an identifier, and replaces or refuses it when asked', async () => {
      const file = path.join(dir, `nul-${pg.name}.db`);
      const db = new Database(file);
      db.exec(HERMES_V11_DDL);
      db.prepare("INSERT INTO sessions (id, source, started_at, system_prompt) VALUES ('s', 'cli', 100, ?)").run(
        'be\u0000have',
      );
      const insert = db.prepare(
        "INSERT INTO messages (session_id, role, content, tool_calls, reasoning, timestamp) VALUES ('s', ?, ?, ?, ?, ?)",
      );
      insert.run('user', 'before\u0000after', null, null, 101);
      insert.run('assistant', null, '[{"id": "c\\u0000d"}]', 'think\u0000\uFFFF', 102);
      insert.run('user', 'plain \\u0000 is six characters', null, null, 103);
      insert.run('user', '\u0000json:[{"type": "text", "text": "x\\u0000y"}]', null, null, 104);
      db.close();
      const badFile = path.join(dir, `nul-id-${pg.name}.db`);
      fs.copyFileSync(file, badFile);
      const bad = new Database(badFile);
      bad.prepare("INSERT INTO sessions (id, source, started_at) VALUES ('t', ?, 100)").run('cl\u0000i');
      bad.close();

      const target = await pg.open();
      const keeper = await sqlite.open();
      try {
        const kept = await importHermesStateDb(file, target, { verify: true });
        expect(kept.nulReplaced).toBe(0);
        expect(kept.verification?.problems).toEqual([]);
        const msgs = await target.getMessages('s');
        expect(msgs.map((m) => m.content)).toEqual([
          'before\u0000after',
          null,
          'plain \\u0000 is six characters',
          [{ type: 'text', text: 'x\u0000y' }],
        ]);
        expect(msgs[1]!.toolCalls).toEqual([{ id: 'c\u0000d' }]);
        expect(msgs[1]!.reasoning).toBe('think\u0000\uFFFF');
        expect((await target.getSession('s'))!.systemPrompt).toBe('be\u0000have');
        // The words on both sides of a NUL are found, as FTS5 finds them.
        expect((await target.searchMessages('after')).map((h) => h.id)).toEqual([msgs[0]!.id]);

        // NUL in an identifier or label cannot be kept: refused with the row named, nothing written.
        const other = await pg.open();
        const error = await importHermesStateDb(badFile, other).catch((e: unknown) => e);
        expect(error).toBeInstanceOf(ImportError);
        expect((error as Error).message).toMatch(/NUL.*identifier or label.*session t \(source\)/);
        expect((error as Error).message).not.toMatch(/message \d/);
        expect(await other.sessionCount()).toBe(0);
        // onNul: 'refuse' refuses any NUL, naming the rows.
        const refused = await importHermesStateDb(file, other, { onNul: 'refuse' }).catch((e: unknown) => e);
        expect((refused as Error).message).toMatch(
          /NUL.*session s \(system_prompt\).*message 1 \(content\), message 2 \(tool_calls\)/,
        );
        expect((refused as Error).message).not.toMatch(/message 3/);
        expect(await other.sessionCount()).toBe(0);
        // onNul: 'replace' stores U+FFFD instead, identifiers included.
        const replaced = await importHermesStateDb(badFile, other, { onNul: 'replace', verify: true });
        expect(replaced.nulReplaced).toBe(5);
        expect(replaced.verification?.problems).toEqual([]);
        const swapped = await other.getMessages('s');
        expect(swapped.map((m) => m.content).slice(0, 2)).toEqual(['before\uFFFDafter', null]);
        expect(swapped[1]!.toolCalls).toEqual([{ id: 'c\uFFFDd' }]);
        expect((await other.getSession('t'))!.source).toBe('cl\uFFFDi');
        await other.close();

        // SQLite keeps NUL, and a store holding it copies into Postgres and back exactly.
        expect((await importHermesStateDb(file, keeper, { verify: true })).verification?.ok).toBe(true);
        expect((await keeper.getMessages('s'))[0]!.content).toBe('before\u0000after');
        const copied = await pg.open();
        const back = await sqlite.open();
        try {
          expect((await copyStore(keeper, copied, { verify: true })).verification?.problems).toEqual([]);
          expect((await copyStore(copied, back, { verify: true })).verification?.problems).toEqual([]);
          expect(await back.getMessages('s')).toEqual(await keeper.getMessages('s'));
          expect(await copied.getMessages('s')).toEqual(await keeper.getMessages('s'));
        } finally {
          await Promise.all([copied.close(), back.close()]);
        }
      } finally {
        await Promise.all([target.close(), keeper.close()]);
      }
    }, 90_000);

    it('runs as `copy --from --to` with a verified summary, and names a Hermes file given to copy', async () => {
      const a = await sqlite.open();
      const fromUrl = a.url;
      await populate(a);
      await a.close();
      const toUrl = await pg.freshUrl();
      let out = '';
      let err = '';
      const io = { out: (t: string) => (out += t), err: (t: string) => (err += t) };
      expect(await main(['copy', '--from', fromUrl, '--to', toUrl], io)).toBe(0);
      expect(out).toMatch(
        /^Copied 3 sessions, 6 messages in [\d.]+ s \([\d,]+ msg\/s\) from .* into .*; verified \(\d+ search spot-checks?\)\.\n$/,
      );
      expect(err).toMatch(/sessions: 3\nmessages: 6 \/ 6 \(100%/);
      out = '';
      expect(await main(['verify', '--from', fromUrl, '--to', toUrl], io)).toBe(0);
      expect(out).toMatch(/verified: the stores agree/);

      const hermes = path.join(dir, `hermes-${pg.name}.db`);
      const db = new Database(hermes);
      db.exec(HERMES_V11_DDL);
      db.close();
      err = '';
      expect(await main(['copy', '--from', hermes, '--to', toUrl], io)).toBe(2);
      expect(err).toMatch(/is a Hermes state\.db, not a store; use: hermes-sessiondb import/);
      err = '';
      expect(await main(['copy', '--from', toUrl, '--to', toUrl], io)).toBe(2);
      expect(err).toMatch(/name the same store/);
    }, 90_000);
  });
}

describe('copy CLI progress', () => {
  it('draws a redrawn bar with rate and ETA on a terminal', async () => {
    const a = await sqlite.open();
    const fromUrl = a.url;
    await populate(a);
    await a.close();
    let err = '';
    const code = await main(['copy', '--from', fromUrl, '--to', await sqlite.freshUrl(), '--no-verify'], {
      out: () => {},
      err: (t) => (err += t),
      errIsTTY: true,
    });
    expect(code).toBe(0);
    expect(err).toMatch(/\r\x1b\[2Kmessages \[#{24}\] 6\/6 100% {2}[\d,]+ msg\/s {2}ETA \d+ s\n$/);
  });
});

// Opening the source of a copy must not migrate it or write to it.
describe('copy leaves the source alone', () => {
  it('does not change the source file', async () => {
    const a = await sqlite.open();
    await populate(a);
    const file = a.url.replace(/^sqlite:/, '');
    await a.close();
    const before = fs.readFileSync(file);
    const from = await openStore(`sqlite:${file}`, { migrate: false, readonly: true });
    const to = await sqlite.open();
    try {
      await copyStore(from, to);
    } finally {
      await Promise.all([from.close(), to.close()]);
    }
    expect(fs.readFileSync(file).equals(before)).toBe(true);
  });
});
