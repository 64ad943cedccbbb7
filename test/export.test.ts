/**
 * The streamed export (CLI `export`, writeHermesExport) on every backend: byte for byte what the in-memory
 * path gives (exportAll / exportSession, then JSON.stringify(hermesExport(s)) per line), across message
 * pages and output pieces; and bounded memory: a process whose heap is capped at 64 MB exports ~150 MB.
 */
import { spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { main } from '../src/cli/main.js';
import { type SessionStore, hermesExport, importHermesStateDb, openStore, writeHermesExport } from '../src/index.js';
import { type Harness, pgliteHarness, postgresHarness, reportAvailability, sqliteFileHarness } from './backends.js';
import { HERMES_V11_DDL } from './helpers/hermes-schema.js';
import { TestClock } from './helpers/store-fixture.js';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hsdb-export-test-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

const LONG_SESSION_MESSAGES = 2_345; // over two of the export's 1,000-message pages

/** Sessions that cover what the export encodes: every field, structured content, JSON, ties, paging. */
async function populate(store: SessionStore, clock: TestClock): Promise<void> {
  clock.set(TestClock.START - 86_400);
  await store.createSession('long', 'cli', {
    model: 'm',
    modelConfig: { temperature: 0.2, top_p: 1.0, stop: ['\n'] },
    systemPrompt: 'You are "Hermes".',
  });
  for (let start = 0; start < LONG_SESSION_MESSAGES; start += 500) {
    const batch = Array.from({ length: Math.min(500, LONG_SESSION_MESSAGES - start) }, (_, k) => {
      const i = start + k;
      return {
        role: i % 3 === 0 ? 'user' : 'assistant',
        content:
          i % 7 === 0
            ? [
                { type: 'text', text: `part ${i} ü` },
                { type: 'image_url', image_url: { url: 'data:,x' } },
              ]
            : `message ${i}: "quoted" \\ tab\t line\u2028sep 記憶 🚀 ${'x'.repeat(500)}`,
        toolCalls:
          i % 5 === 0
            ? [{ id: `c${i}`, type: 'function', function: { name: 'terminal', arguments: '{"cmd": "ls"}' } }]
            : null,
        reasoningDetails: i % 11 === 0 ? [{ type: 'summary', score: 0.5, n: 3 }] : null,
        codexReasoningItems: i % 13 === 0 ? [{ id: `r${i}` }] : null,
        tokenCount: i % 4 === 0 ? i : null,
        finishReason: i % 3 === 0 ? null : 'stop',
      };
    });
    await store.appendMessages('long', batch);
  }
  await store.updateTokenCounts('long', { inputTokens: 1_000, outputTokens: 200, estimatedCostUsd: 0.125 });
  await store.setSessionTitle('long', 'A long one');
  // Equal activity: the order falls to started_at, then id (both descending).
  clock.set(TestClock.START - 50_000);
  await store.createSession('tie-a', 'telegram');
  clock.set(TestClock.START - 50_000);
  await store.createSession('tie-b', 'telegram', { parentSessionId: 'long' });
  clock.set(TestClock.START - 40_000);
  await store.createSession('chat', 'telegram', { userId: '42' });
  await store.appendMessage('chat', 'user', 'hello', { reasoning: 'think', reasoningContent: 'more' });
  await store.endSession('chat', 'user_exit');
  clock.reset();
}

/** The in-memory path the CLI took before streaming: everything read at once, then JSON.stringify. */
async function golden(store: SessionStore, options: { source?: string; sessionId?: string } = {}): Promise<string> {
  const sessions =
    options.sessionId !== undefined
      ? [await store.exportSession(options.sessionId)].filter((s) => s !== null)
      : await store.exportAll({ source: options.source ?? null });
  return sessions.map((s) => `${JSON.stringify(hermesExport(s))}\n`).join('');
}

async function streamed(store: SessionStore, options: { source?: string; sessionId?: string } = {}) {
  const pieces: string[] = [];
  const counts = await writeHermesExport(store, async (chunk) => void pieces.push(chunk), options);
  return { text: pieces.join(''), pieces: pieces.length, counts };
}

async function run(...argv: string[]) {
  let out = '';
  let err = '';
  const code = await main(argv, { out: (t) => (out += t), err: (t) => (err += t) });
  return { code, out, err };
}

for (const h of [sqliteFileHarness(), pgliteHarness(), await postgresHarness()] as Harness[]) {
  const available = reportAvailability(h);
  describe.skipIf(!available)(`streamed export [${h.name}]${available ? '' : ` (skipped: ${h.unavailable})`}`, () => {
    afterAll(() => h.cleanup());

    it('writes exactly what the in-memory export gives, for all sessions, one source and one session', async () => {
      const url = await h.freshUrl();
      const clock = new TestClock();
      const store = await openStore(url, { clock: clock.now });
      let all: string;
      try {
        await populate(store, clock);
        all = await golden(store);
        expect(
          all
            .split('\n')
            .slice(0, -1)
            .map((l) => (JSON.parse(l) as { id: string }).id),
        ).toEqual(['chat', 'tie-b', 'tie-a', 'long']);
        const whole = await streamed(store);
        expect(whole.text).toBe(all);
        expect(whole.pieces).toBeGreaterThan(1);
        expect(whole.counts).toEqual({ sessions: 4, messages: LONG_SESSION_MESSAGES + 1 });
        expect((await streamed(store, { source: 'telegram' })).text).toBe(await golden(store, { source: 'telegram' }));
        expect((await streamed(store, { sessionId: 'long' })).text).toBe(await golden(store, { sessionId: 'long' }));
        expect(await streamed(store, { sessionId: 'nope' })).toEqual({
          text: '',
          pieces: 0,
          counts: { sessions: 0, messages: 0 },
        });
      } finally {
        await store.close();
      }
      if (h.name === 'pglite') return; // one process per PGlite directory: the CLI cannot open it beside the test
      const file = path.join(dir, `${h.name}.jsonl`);
      const toFile = await run('export', '--db', url, '--out', file);
      expect(toFile).toMatchObject({ code: 0, out: '', err: 'exported 4 sessions\n' });
      expect(fs.readFileSync(file, 'utf8')).toBe(all);
      expect((fs.statSync(file).mode & 0o777).toString(8)).toBe('600');
      expect((await run('export', '--db', url)).out).toBe(all);
      // An unknown session is refused before the file is touched.
      const refused = await run('export', '--db', url, '--session', 'nope', '--out', file);
      expect(refused.code).toBe(2);
      expect(fs.readFileSync(file, 'utf8')).toBe(all);
      expect(fs.readdirSync(dir).filter((f) => f.endsWith('.partial'))).toEqual([]);
    });
  });
}

describe('export memory', () => {
  it('exports ~150 MB of messages from a process whose heap is capped at 64 MB, byte for byte', async () => {
    // Built as a Hermes file (no FTS) and imported: the bulk of each message is reasoning, which is not indexed.
    const source = path.join(dir, 'big-state.db');
    const hermes = new Database(source);
    hermes.exec(HERMES_V11_DDL);
    const insertSession = hermes.prepare(
      "INSERT INTO sessions (id, source, started_at, message_count) VALUES (?, 'cli', ?, 100)",
    );
    const insertMessage = hermes.prepare(
      "INSERT INTO messages (session_id, role, content, reasoning, timestamp) VALUES (?, 'assistant', ?, ?, ?)",
    );
    hermes.transaction(() => {
      for (let s = 0; s < 300; s++) {
        const id = `big_${String(s).padStart(3, '0')}`;
        insertSession.run(id, 1_800_000_000 + s);
        for (let m = 0; m < 100; m++)
          insertMessage.run(
            id,
            `message ${s}.${m}`,
            String.fromCharCode(97 + ((s + m) % 26)).repeat(5_000),
            1_800_000_000 + s + m / 1000,
          );
      }
    })();
    hermes.close();
    const storeFile = path.join(dir, 'big-store.db');
    const store = await openStore(`sqlite:${storeFile}`);
    let expectedHash: string;
    try {
      await importHermesStateDb(source, store);
      expectedHash = crypto
        .createHash('sha256')
        .update(await golden(store))
        .digest('hex');
    } finally {
      await store.close();
    }

    const out = path.join(dir, 'big.jsonl');
    const script = fileURLToPath(new URL('../bench/export-rss.ts', import.meta.url));
    const child = spawnSync(
      process.execPath,
      ['--max-old-space-size=64', '--import', 'tsx', script, `sqlite:${storeFile}`, out],
      { encoding: 'utf8' },
    );
    expect(child.status, child.stderr.slice(-2_000)).toBe(0);
    const figures = JSON.parse(child.stdout.trim().split('\n').pop()!) as {
      code: number;
      note: string;
      stallMs: number;
    };
    expect(figures).toMatchObject({ code: 0, note: 'exported 300 sessions' });
    expect(fs.statSync(out).size).toBeGreaterThan(150e6);
    expect(crypto.createHash('sha256').update(fs.readFileSync(out)).digest('hex')).toBe(expectedHash);
    // Reading and encoding yield to the event loop between pages (the whole export took one block before).
    expect(figures.stallMs).toBeLessThan(500);
  });
});
