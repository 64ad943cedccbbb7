/**
 * An import into SQLite holds off the session-activity insert triggers of drizzle/sqlite/0005 with the FTS5
 * ones and rebuilds sessions.last_message_at / chain_last_active at the end (db/sqlite/deferred-triggers.ts). These
 * tests prove the values end as the per-row triggers leave them (a reference store filled through the
 * triggers) and as 0005's own backfill defines them, on compression chains that run from sessions the store
 * already held through imported ones, and with messages older than their session's start (the trigger
 * `session_activity_message_insert_early`, the one case where a message lowers the values).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { buildHermesFile } from '../bench/import.js';
import { type MysqlBackend, importHermesStateDb, openStore } from '../src/index.js';
import { type ActivityRow, activityAgainstBackfill } from './helpers/session-activity.js';
import { mariadbHarness, probeMysql } from './backends.js';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hsdb-deferred-activity-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

/** Sessions s0… of 25 messages each (bench/import.ts), ids moved above the store's own, then reshaped. */
function buildSource(file: string): void {
  buildHermesFile(file, 3_000);
  const db = new Database(file);
  try {
    const lastAt = (id: string) =>
      db.prepare('SELECT MAX(timestamp) FROM messages WHERE session_id = ?').pluck().get(id) as number;
    db.exec('UPDATE messages SET id = id + 100000');
    // A compression chain s10 → s11 → s12 (s10 is also in the store already, see below).
    const compress = db.prepare("UPDATE sessions SET end_reason = 'compression', ended_at = ? WHERE id = ?");
    const link = db.prepare('UPDATE sessions SET parent_session_id = ? WHERE id = ?');
    compress.run(lastAt('s10'), 's10');
    link.run('s10', 's11');
    compress.run(lastAt('s11'), 's11');
    link.run('s11', 's12');
    // s12 started after all its messages: each is "early", its chain ends on its newest message.
    db.prepare('UPDATE sessions SET started_at = ? WHERE id = ?').run(lastAt('s12') + 100, 's12');
    // s20's first message predates the session, the rest do not.
    db.prepare(
      "UPDATE messages SET timestamp = timestamp - 5000 WHERE id = (SELECT MIN(id) FROM messages WHERE session_id = 's20')",
    ).run();
    // s40 holds a single message, older than the session.
    db.exec(`DELETE FROM messages WHERE session_id = 's40' AND id > (SELECT MIN(id) FROM messages WHERE session_id = 's40');
             UPDATE messages SET timestamp = timestamp - 9000 WHERE session_id = 's40';`);
    // A compression child without messages: s30 → s31.
    compress.run(lastAt('s30'), 's30');
    link.run('s30', 's31');
    db.exec("DELETE FROM messages WHERE session_id = 's31'");
  } finally {
    db.close();
  }
}

/** A store holding pre-root (compression-ended) → s10 (the source's id, so the store's row is kept), with messages. */
async function prepareTarget(file: string, source: string): Promise<void> {
  await (await openStore(`sqlite:${file}`)).close();
  const src = new Database(source, { readonly: true });
  const s10 = src.prepare("SELECT started_at, ended_at FROM sessions WHERE id = 's10'").get() as {
    started_at: number;
    ended_at: number;
  };
  src.close();
  const db = new Database(file);
  try {
    db.prepare(
      "INSERT INTO sessions (id, source, started_at, ended_at, end_reason) VALUES ('pre-root', 'cli', 1700000000, ?, 'compression')",
    ).run(s10.started_at - 10);
    db.prepare(
      "INSERT INTO sessions (id, source, started_at, ended_at, end_reason, parent_session_id) VALUES ('s10', 'telegram', ?, ?, 'compression', 'pre-root')",
    ).run(s10.started_at - 5, s10.ended_at);
    db.exec(`INSERT INTO sessions (id, source, started_at) VALUES ('pre-side', 'cli', 1700000000);
             INSERT INTO messages (session_id, role, content, timestamp) VALUES
               ('pre-root', 'user', 'before the import', 1700000100),
               ('s10', 'user', 'the store''s own s10', ${s10.started_at - 4}),
               ('pre-side', 'user', 'elsewhere', 1700000200);`);
  } finally {
    db.close();
  }
}

/** The same sessions and messages written through the triggers into a fresh store: parents, then messages by id. */
async function triggerReference(imported: string, file: string): Promise<ActivityRow[]> {
  await (await openStore(`sqlite:${file}`)).close();
  const db = new Database(file);
  try {
    db.prepare('ATTACH DATABASE ? AS imported').run(imported);
    db.exec(`INSERT INTO main.sessions SELECT * FROM imported.sessions;
             INSERT INTO main.messages SELECT * FROM imported.messages ORDER BY id;`);
    return db
      .prepare('SELECT id, last_message_at, chain_last_active FROM main.sessions ORDER BY id')
      .all() as ActivityRow[];
  } finally {
    db.close();
  }
}

describe('SQLite import: session activity built at the end', () => {
  it('ends with the values the per-row triggers and 0005 backfill give, across pre-existing and imported chains', async () => {
    const source = path.join(dir, 'state.db');
    buildSource(source);
    const file = path.join(dir, 'store.db');
    await prepareTarget(file, source);
    const store = await openStore(`sqlite:${file}`);
    try {
      const report = await importHermesStateDb(source, store, { onConflict: 'keep-target' });
      expect(report.messages).toBe(3_000 - 24 - 25);
    } finally {
      await store.close();
    }
    const { stored, backfill } = activityAgainstBackfill(file);
    expect(stored).toEqual(backfill);
    expect(stored).toEqual(await triggerReference(file, path.join(dir, 'reference.db')));

    // The data really has the cases this is about (so a build that only raised values, or skipped
    // ancestors, would differ).
    const db = new Database(file, { readonly: true });
    try {
      const row = (id: string) =>
        db.prepare('SELECT started_at, last_message_at, chain_last_active FROM sessions WHERE id = ?').get(id) as {
          started_at: number;
          last_message_at: number | null;
          chain_last_active: number;
        };
      const s12 = row('s12');
      expect(s12.last_message_at).toBeLessThan(s12.started_at);
      // pre-root's chain (store's session → store's row of s10 → imported s11 → s12) ends on s12's newest message.
      expect(row('pre-root').chain_last_active).toBe(s12.last_message_at);
      const s40 = row('s40');
      expect(s40.chain_last_active).toBe(s40.last_message_at);
      expect(s40.last_message_at).toBeLessThan(s40.started_at);
      expect(row('s31').last_message_at).toBeNull();
    } finally {
      db.close();
    }

    // A second run (nothing new to write, the same range built again) changes nothing.
    const again = await openStore(`sqlite:${file}`);
    try {
      await importHermesStateDb(source, again, { onConflict: 'keep-target' });
    } finally {
      await again.close();
    }
    expect(activityAgainstBackfill(file).stored).toEqual(stored);
  }, 120_000);
});

const mysqlUnavailable = await probeMysql();

// MySQL holds the message insert trigger off through a connection variable and builds session_activity
// afterwards (hsdb_session_activity_build, migration 0006): the values must be SQLite's for the same import.
describe.skipIf(mysqlUnavailable !== undefined)(
  `MariaDB import: session_activity built at the end${mysqlUnavailable ? ` (skipped: ${mysqlUnavailable})` : ''}`,
  () => {
    it("ends with SQLite's values for the same import, and a second import changes nothing", async () => {
      const source = path.join(dir, 'state-for-mariadb.db');
      buildSource(source);
      const file = path.join(dir, 'sqlite-for-mariadb.db');
      const sqlite = await openStore(`sqlite:${file}`);
      try {
        await importHermesStateDb(source, sqlite);
      } finally {
        await sqlite.close();
      }
      const expected = activityAgainstBackfill(file).stored;
      expect(expected.some((r) => r.last_message_at !== null && r.chain_last_active !== r.last_message_at)).toBe(true);

      const h = await mariadbHarness();
      try {
        const store = await openStore(await h.freshUrl());
        const read = () =>
          (store.backend as MysqlBackend).withConnection(async (c) => {
            const [rows] = await c.query(
              `SELECT s.id, UNIX_TIMESTAMP(a.last_message_at) AS last_message_at, UNIX_TIMESTAMP(a.chain_last_active) AS chain_last_active
               FROM sessions s LEFT JOIN session_activity a ON a.session_id = s.id ORDER BY s.id`,
            );
            return (rows as Array<Record<string, unknown>>).map((r) => ({
              id: String(r.id),
              last_message_at: r.last_message_at === null ? null : Number(r.last_message_at),
              chain_last_active: r.chain_last_active === null ? null : Number(r.chain_last_active),
            }));
          });
        try {
          await importHermesStateDb(source, store);
          const stored = await read();
          expect(stored).toEqual(expected);
          await importHermesStateDb(source, store, { onConflict: 'keep-target' });
          expect(await read()).toEqual(stored);
          // Appends after the import run the trigger again (the connection variable was reset).
          const [tip] = stored.filter((r) => r.id === 's12');
          const at = await store.appendMessage('s12', 'user', 'after the import');
          expect(at).toBeGreaterThan(0);
          const after = await read();
          const appended = (await store.getMessages('s12')).at(-1)!.timestamp;
          expect(after.find((r) => r.id === 's12')!.last_message_at).toBe(appended);
          expect(after.find((r) => r.id === 's10')!.chain_last_active).toBe(appended);
          expect(tip!.last_message_at).not.toBe(appended);
        } finally {
          await store.close();
        }
      } finally {
        await h.cleanup();
      }
    }, 180_000);
  },
);
