/**
 * An import or copy finds every value its target cannot hold before it writes anything, and names it (table,
 * id, column): a millisecond timestamp on Postgres and MySQL, text that is no number on every target, a row
 * past MySQL's max_allowed_packet. And MySQL statements are bounded in bytes as the server counts them, so
 * two messages that each fit (9 MB of CJK in UTF-8) go in, where one statement of both was cut off.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import {
  ImportError,
  type SessionStore,
  TransferRefusedError,
  copyStore,
  importHermesStateDb,
  openStore,
} from '../src/index.js';
import { YEAR_1, YEAR_1000, YEAR_10000 } from '../src/db/bulk-fit.js';
import { harnessAvailable } from '../src/testing/index.js';
import { type Harness, pgliteHarness, postgresHarness, sqliteFileHarness, mariadbHarness } from './backends.js';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hsdb-transfer-limits-'));
const mariadb = await mariadbHarness();
const harnesses: Harness[] = [sqliteFileHarness(), pgliteHarness(), await postgresHarness(), mariadb];
afterAll(async () => {
  for (const h of harnesses) await h.cleanup();
  fs.rmSync(dir, { recursive: true, force: true });
});

/** A store of three sessions and six messages in which message 4 (not the first) has `timestamp` set to `bad`. */
async function sourceWith(bad: string): Promise<SessionStore> {
  const file = path.join(dir, `source-${fs.readdirSync(dir).length}.db`);
  const store = await openStore(`sqlite:${file}`);
  for (const id of ['a', 'b', 'c']) {
    await store.createSession(id, 'cli');
    await store.appendMessage(id, 'user', `hello ${id}`);
    await store.appendMessage(id, 'assistant', 'hi');
  }
  await store.close();
  const db = new Database(file);
  db.prepare(`UPDATE messages SET timestamp = ${bad} WHERE id = 4`).run();
  db.close();
  return openStore(`sqlite:${file}`);
}

async function refusal(run: Promise<unknown>): Promise<TransferRefusedError> {
  const error = await run.then(
    () => undefined,
    (e: unknown) => e,
  );
  const refused = error instanceof ImportError ? error.cause : error;
  expect(refused).toBeInstanceOf(TransferRefusedError);
  return refused as TransferRefusedError;
}

/** A Hermes state.db of one session and the given messages (sessions and messages tables only). */
function hermesFile(messages: Array<{ content: string; timestamp: number | string }>): string {
  const file = path.join(dir, `state-${fs.readdirSync(dir).length}.db`);
  const db = new Database(file);
  db.exec(`CREATE TABLE sessions (id TEXT PRIMARY KEY, source TEXT NOT NULL, started_at REAL NOT NULL);
    CREATE TABLE messages (id INTEGER PRIMARY KEY AUTOINCREMENT, session_id TEXT NOT NULL, role TEXT NOT NULL,
      content TEXT, timestamp REAL NOT NULL);`);
  db.prepare('INSERT INTO sessions VALUES (?, ?, ?)').run('s1', 'cli', 1_700_000_000);
  const insert = db.prepare('INSERT INTO messages (session_id, role, content, timestamp) VALUES (?, ?, ?, ?)');
  for (const m of messages) insert.run('s1', 'user', m.content, m.timestamp);
  db.close();
  return file;
}

for (const h of harnesses) {
  describe.skipIf(!harnessAvailable(h))(
    `values ${h.name} cannot hold${h.unavailable ? ` (skipped: ${h.unavailable})` : ''}`,
    () => {
      // SQLite's REAL holds a millisecond epoch; text that is no number it would store as NULL (or refuse: NOT NULL).
      const bad = h.name === 'sqlite-file' ? "'soon'" : '1.7e12';
      // One target for both tests: each leaves it as empty as it found it.
      let opened: SessionStore | undefined;
      const target = async () => {
        opened ??= await h.open();
        return opened;
      };
      afterAll(() => opened?.close());

      it('a copy names the table, id and column of a bad timestamp and writes nothing', async () => {
        const from = await sourceWith(bad);
        const to = await target();
        try {
          const refused = await refusal(copyStore(from, to));
          expect(refused.unfit.map(({ table, id, column }) => ({ table, id, column }))).toEqual([
            { table: 'messages', id: '4', column: 'timestamp' },
          ]);
          expect(refused.message).toContain('messages 4 timestamp');
          expect(await to.sessionCount()).toBe(0);
          expect(await to.messageCount()).toBe(0);
        } finally {
          await from.close();
        }
      });

      it('an import of a Hermes file is refused the same way, and so is its re-run', async () => {
        const file = hermesFile([
          { content: 'first', timestamp: 1_700_000_001 },
          { content: 'second', timestamp: h.name === 'sqlite-file' ? 'soon' : 1.7e12 },
        ]);
        const to = await target();
        for (let run = 0; run < 2; run++) {
          const refused = await refusal(importHermesStateDb(file, to));
          expect(refused.unfit[0]).toMatchObject({ table: 'messages', id: '2', column: 'timestamp' });
          expect(await to.sessionCount()).toBe(0);
          expect(await to.messageCount()).toBe(0);
        }
      });

      it('keeps the first and the last time the target holds, exactly (run last: it fills the target)', async () => {
        const first = h.dialect === 'mysql' ? YEAR_1000 : h.dialect === 'pg' ? YEAR_1 : -1e13;
        const last = h.dialect === 'sqlite' ? 1e13 : YEAR_10000 - 0.5;
        const from = await sourceWith(String(last));
        const db = new Database(from.url.replace(/^sqlite:/, ''));
        db.prepare('UPDATE sessions SET started_at = ? WHERE id = ?').run(first, 'a');
        db.close();
        const to = await target();
        try {
          await copyStore(from, to);
          expect((await to.getSession('a'))?.startedAt).toBe(first);
          expect((await to.getMessages('b')).map((m) => m.timestamp)).toContain(last);
        } finally {
          await from.close();
        }
      });
    },
  );
}

describe.skipIf(!harnessAvailable(mariadb))(
  `MySQL statements bounded in bytes${mariadb.unavailable ? ` (skipped: ${mariadb.unavailable})` : ''}`,
  () => {
    // 3,000,000 CJK characters: 9 MB in UTF-8, under MariaDB's default max_allowed_packet of 16 MB alone, over it together.
    const cjk = (n: number) => '漢'.repeat(n);

    it('imports two messages that each fit the server packet but not together', async () => {
      const file = hermesFile([
        { content: cjk(3_000_000), timestamp: 1_700_000_001 },
        { content: cjk(3_000_000), timestamp: 1_700_000_002 },
      ]);
      const to = await mariadb.open();
      try {
        const report = await importHermesStateDb(file, to);
        expect(report.messages).toBe(2);
        const messages = await to.getMessages('s1');
        expect(messages.map((m) => (m.content as string).length)).toEqual([3_000_000, 3_000_000]);
      } finally {
        await to.close();
      }
    });

    it('refuses a message longer than max_allowed_packet before writing anything, naming it and the setting', async () => {
      const file = hermesFile([
        { content: 'small', timestamp: 1_700_000_001 },
        { content: cjk(6_000_000), timestamp: 1_700_000_002 },
      ]);
      const to = await mariadb.open();
      try {
        const refused = await refusal(importHermesStateDb(file, to));
        expect(refused.unfit.map(({ table, id, column }) => ({ table, id, column }))).toEqual([
          { table: 'messages', id: '2', column: 'content' },
        ]);
        expect(refused.message).toContain('max_allowed_packet');
        expect(await to.sessionCount()).toBe(0);
        expect(await to.messageCount()).toBe(0);
      } finally {
        await to.close();
      }
    });
  },
);
