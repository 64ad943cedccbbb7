/**
 * Importing a Hermes state.db while Hermes writes it: another process appends throughout with Hermes' write
 * pattern (WAL, BEGIN IMMEDIATE, frequent passive checkpoints). The import must still finish (a steady
 * writer cannot starve the snapshot), pass verification against its snapshot, and hold one point in time:
 * the appended messages it carries are whole and are exactly the first k the writer committed, each
 * session's message_count equals its rows, and k lies between the counts before and after the import.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeHermesHistoryStateDb } from '../../examples/hermes-state-db.js';
import { HermesFileSource, type SessionStore, importHermesStateDb } from '../../src/index.js';
import { sqliteMemoryHarness } from '../backends.js';
import { LIVE_SESSION_PREFIX, liveContent, liveNumber, liveSessionId } from '../helpers/live-hermes.js';
import { spawnTs, waitForLine } from '../helpers/processes.js';

const BASE_MESSAGES = 6_000;
const ROUNDS = 3;

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hsdb-live-import-'));
const file = path.join(dir, 'state.db');
let base: number;
beforeAll(() => {
  writeHermesHistoryStateDb(file, { messages: BASE_MESSAGES });
  base = messageCount(file);
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

function messageCount(file: string): number {
  const db = new Database(file, { readonly: true, fileMustExist: true });
  try {
    return db.prepare('SELECT COUNT(*) FROM messages').pluck().get() as number;
  } finally {
    db.close();
  }
}

/** Every message of the store, a page at a time, in id order. */
async function allMessages(store: SessionStore): Promise<Array<Record<string, unknown>>> {
  const out: Array<Record<string, unknown>> = [];
  for (let after = 0; ; ) {
    const page = await store.bulkRead.messagePage(after, 5_000);
    if (page.length === 0) return out;
    out.push(...page);
    after = page[page.length - 1]!.id as number;
  }
}

describe('import from a Hermes file that another process keeps writing', () => {
  it('keeps the event loop turning while it snapshots and checks the file', async () => {
    let last = performance.now();
    let longest = 0;
    const tick = () => {
      const now = performance.now();
      longest = Math.max(longest, now - last);
      last = now;
    };
    const ticker = setInterval(tick, 1);
    try {
      const source = await HermesFileSource.open(file);
      tick();
      source.close();
    } finally {
      clearInterval(ticker);
    }
    // The backup goes 1 MiB per step and quick_check (of every table's b-tree) runs in a worker.
    expect(longest).toBeLessThan(150);
  });

  it(`takes one consistent snapshot, ${ROUNDS} times while the writer appends and checkpoints`, async () => {
    const writer = spawnTs('../reliability/workers/hermes-appender.ts', [file, '10']);
    const exited = new Promise<void>((resolve) => writer.once('exit', () => resolve()));
    try {
      await waitForLine(writer, (line) => Number(line) >= 200);
      for (let round = 0; round < ROUNDS; round++) {
        const before = messageCount(file);
        const store = await sqliteMemoryHarness().open();
        try {
          const report = await importHermesStateDb(file, store, { verify: true });
          const after = messageCount(file);
          expect(report.verification?.problems).toEqual([]);
          expect(report.verification?.ok).toBe(true);
          expect(report.orphanSessions).toEqual([]);
          expect(report.messages).toBeGreaterThanOrEqual(before);
          expect(report.messages).toBeLessThanOrEqual(after);
          // The writer really wrote while this import ran (otherwise the round proves nothing).
          expect(after, `round ${round}: the writer committed nothing during the import`).toBeGreaterThan(before);

          const messages = await allMessages(store);
          expect(messages).toHaveLength(report.messages);
          const live = messages.filter((m) => liveNumber(m.content) !== null);
          // One point in time: the first k appends, each whole, and nothing else new.
          expect(live.map((m) => liveNumber(m.content))).toEqual(live.map((_, n) => n));
          expect(report.messages).toBe(base + live.length);
          for (const [n, m] of live.entries()) {
            if (m.content !== liveContent(n) || m.session_id !== liveSessionId(n)) {
              expect({ n, session: m.session_id, length: String(m.content).length }).toEqual({
                n,
                session: liveSessionId(n),
                length: liveContent(n).length,
              });
            }
          }
          const rowsPerSession = new Map<string, number>();
          for (const m of live)
            rowsPerSession.set(String(m.session_id), (rowsPerSession.get(String(m.session_id)) ?? 0) + 1);
          const liveSessions = (await store.bulkRead.sessions()).filter((s) =>
            String(s.id).startsWith(LIVE_SESSION_PREFIX),
          );
          expect(liveSessions.map((s) => [s.id, s.message_count])).toEqual([...rowsPerSession.entries()]);
        } finally {
          await store.close();
        }
      }
    } finally {
      writer.kill('SIGTERM');
      await exited;
    }
  });
});
