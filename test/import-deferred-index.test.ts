/**
 * An import into SQLite writes its pages with the FTS5 (and session-activity) insert triggers held off and
 * builds both FTS5 indexes and sessions' activity values once at the end (db/sqlite/deferred-triggers.ts). These tests prove the indexes end exactly as the triggers would
 * have written them, that no row written by anyone else meanwhile loses its entry, and that an import
 * interrupted between its pages and the build is completed by running it again.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { buildHermesFile } from '../bench/import.js';
import { HermesFileSource, type RowSource, type SessionStore, importHermesStateDb, openStore } from '../src/index.js';
import { transferRows } from '../src/transfer/pipeline.js';
import { spawnTs, waitForLine } from './helpers/processes.js';
import { activityAgainstBackfill } from './helpers/session-activity.js';

/** sessions.last_message_at / chain_last_active as stored, and as 0005's backfill computes them on the same rows. */
function expectActivityRight(file: string): void {
  const { stored, backfill } = activityAgainstBackfill(file);
  expect(stored).toEqual(backfill);
}

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hsdb-deferred-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));
const source = path.join(dir, 'state.db');
// More than one import page (5,000) and more than one build chunk (10,000).
const MESSAGES = 26_000;
buildHermesFile(source, MESSAGES);

let n = 0;
const freshFile = () => path.join(dir, `store-${n++}.db`);
const FTS = ['messages_fts', 'messages_fts_trigram'] as const;

/** Each FTS table's rows, its count, and FTS5's own integrity check, read with a separate connection. */
function ftsState(file: string) {
  const db = new Database(file, { readonly: true });
  try {
    const messages = db.prepare('SELECT COUNT(*) FROM messages').pluck().get() as number;
    const tables = FTS.map((t) => ({
      table: t,
      rows: db.prepare(`SELECT COUNT(*) FROM ${t}`).pluck().get() as number,
      // Messages without an entry, and entries without a message.
      missing: db
        .prepare(`SELECT COUNT(*) FROM messages m WHERE NOT EXISTS (SELECT 1 FROM ${t} f WHERE f.rowid = m.id)`)
        .pluck()
        .get() as number,
      stray: db
        .prepare(`SELECT COUNT(*) FROM ${t} f WHERE NOT EXISTS (SELECT 1 FROM messages m WHERE m.id = f.rowid)`)
        .pluck()
        .get() as number,
    }));
    const triggers = db
      .prepare("SELECT name, sql FROM sqlite_master WHERE type = 'trigger' ORDER BY name")
      .all() as Array<{ name: string; sql: string }>;
    return { messages, tables, triggers };
  } finally {
    db.close();
  }
}

/** FTS5's integrity-check (reads every entry against the stored text); throws when the index is corrupt. */
function integrityCheck(file: string): void {
  const db = new Database(file);
  try {
    for (const t of FTS) db.prepare(`INSERT INTO ${t}(${t}, rank) VALUES ('integrity-check', 1)`).run();
  } finally {
    db.close();
  }
}

const complete = (messages: number) => FTS.map((table) => ({ table, rows: messages, missing: 0, stray: 0 }));

describe('SQLite import: FTS5 indexes built at the end', () => {
  it('ends with the entries the per-row triggers write, the triggers as they were', async () => {
    const file = freshFile();
    const store = await openStore(`sqlite:${file}`);
    const triggersBefore = ftsState(file).triggers;
    try {
      const report = await importHermesStateDb(source, store, { verify: true });
      expect(report.verification?.problems).toEqual([]);
      expect(report.messages).toBe(MESSAGES);
    } finally {
      await store.close();
    }
    const after = ftsState(file);
    expect(after.triggers).toEqual(triggersBefore);
    expect(after.tables).toEqual(complete(MESSAGES));
    integrityCheck(file);

    // The same rows inserted one by one through the triggers (the reference) index the same text.
    const reference = freshFile();
    await (await openStore(`sqlite:${reference}`)).close();
    const db = new Database(reference);
    try {
      db.prepare('ATTACH DATABASE ? AS imported').run(file);
      db.exec(`INSERT INTO sessions SELECT * FROM imported.sessions;
               INSERT INTO messages SELECT * FROM imported.messages ORDER BY id;`);
      const activity = (schema: string) =>
        db.prepare(`SELECT id, last_message_at, chain_last_active FROM ${schema}.sessions ORDER BY id`).all();
      expect(activity('imported')).toEqual(activity('main'));
      for (const t of FTS) {
        const differing = db
          .prepare(
            `SELECT COUNT(*) FROM (SELECT rowid, content FROM main.${t} EXCEPT SELECT rowid, content FROM imported.${t})`,
          )
          .pluck()
          .get();
        expect(differing, t).toBe(0);
        // Same answers to the index itself: a word and a substring query.
        for (const q of ['"kubernetes"', '"数据库"', '"deploy"']) {
          const ids = (schema: string) =>
            db.prepare(`SELECT rowid FROM ${schema}.${t} WHERE ${t} MATCH ? ORDER BY rowid`).pluck().all(q);
          expect(ids('imported'), `${t} ${q}`).toEqual(ids('main'));
        }
      }
    } finally {
      db.close();
    }
  }, 120_000);

  it('keeps the entries of rows another process appends while the import runs', async () => {
    const file = freshFile();
    const url = `sqlite:${file}`;
    const store = await openStore(url);
    await store.createSession('live', 'cli');
    // The writer starts appending before the import does: start its ids above the source's, as a store that
    // already held newer messages would (ids it took below them would be the target's rows under
    // keep-target). Appends once the import runs are kept above them by the import's own reservation.
    const raw = new Database(file);
    raw.prepare("INSERT INTO sqlite_sequence (name, seq) VALUES ('messages', 10000000)").run();
    raw.close();
    const writer = spawnTs('../reliability/workers/append-forever.ts', [url, 'live', 'concurrent']);
    const exited = new Promise<void>((resolve) => writer.once('exit', () => resolve()));
    let appended: number[] = [];
    try {
      await waitForLine(writer, (l) => l === 'ready');
      const ids: number[] = [];
      writer.stdout.on('data', (chunk: Buffer) => {
        for (const line of chunk.toString().split('\n')) if (/^\d+$/.test(line)) ids.push(Number(line));
      });
      const report = await importHermesStateDb(source, store, { onConflict: 'keep-target' });
      expect(report.messages).toBe(MESSAGES);
      appended = [...ids];
    } finally {
      writer.kill('SIGTERM');
      await exited;
    }
    try {
      // The writer really wrote during the import (otherwise this proves nothing).
      expect(appended.length).toBeGreaterThan(5);
      // No source row was skipped for an appended one.
      const sourceMax = (await HermesFileSource.open(source).then(async (s) => {
        try {
          return await s.maxMessageId();
        } finally {
          await s.close();
        }
      }))!;
      expect(Math.min(...appended)).toBeGreaterThan(sourceMax);
      const below = new Database(file, { readonly: true });
      expect(below.prepare('SELECT COUNT(*) FROM messages WHERE id <= ?').pluck().get(sourceMax)).toBe(MESSAGES);
      below.close();
      const state = ftsState(file);
      expect(state.tables).toEqual(complete(state.messages));
      expect(state.messages).toBeGreaterThanOrEqual(MESSAGES + appended.length);
      integrityCheck(file);
      expectActivityRight(file);
      // Search finds an appended row and imported rows, through both indexes.
      const last = appended[appended.length - 1]!;
      const i = appended.length - 1;
      expect((await store.searchMessages(`durable-concurrent-${i}`, { limit: -1 })).map((h) => h.id)).toContain(last);
      expect((await store.searchMessages('kubernetes', { limit: 5 })).length).toBeGreaterThan(0);
      expect((await store.searchMessages('数据库', { limit: 5 })).length).toBeGreaterThan(0);
    } finally {
      await store.close();
    }
  }, 120_000);

  it('after an import that stopped between its pages and the build, running it again completes the indexes', async () => {
    const file = freshFile();
    const url = `sqlite:${file}`;
    const store = await openStore(url);
    const triggersBefore = ftsState(file).triggers;
    const snapshot = await HermesFileSource.open(source);
    let delivered = 0;
    const failing: RowSource = {
      label: snapshot.label,
      sessions: () => snapshot.sessions(),
      messageCount: () => snapshot.messageCount(),
      maxMessageId: () => snapshot.maxMessageId(),
      meta: () => snapshot.meta(),
      topicModes: () => snapshot.topicModes(),
      topicBindings: () => snapshot.topicBindings(),
      // Gone after two pages of 5,000 are written (the pipeline reads a page in several slices, and reads
      // every message once before its first write, to check what the target can hold).
      messagePage: async (after, limit) => {
        if (delivered >= MESSAGES + 10_000) throw new Error('source vanished');
        const rows = await snapshot.messagePage(after, limit);
        delivered += rows.length;
        return rows;
      },
    };
    try {
      await expect(transferRows(failing, store)).rejects.toThrow('source vanished');
      // Two pages written, their entries not yet built; the triggers are all in place.
      const stopped = ftsState(file);
      expect(stopped.messages).toBe(10_000);
      expect(stopped.triggers).toEqual(triggersBefore);
      expect(stopped.tables.map((t) => t.missing)).toEqual([10_000, 10_000]);
      // A row written meanwhile goes through the triggers (its id above the source's: the ids were reserved).
      await store.createSession('meanwhile', 'cli');
      const id = await store.appendMessage('meanwhile', 'user', 'written between the runs zanzibar');
      expect((await store.searchMessages('zanzibar')).map((h) => h.id)).toEqual([id]);

      const report = await importHermesStateDb(source, store, { verify: true });
      // Verification sees the source's rows whole and searchable (the extra session is the only difference).
      expect(report.verification?.problems.filter((p) => !p.includes('session meanwhile'))).toEqual([]);
      const state = ftsState(file);
      expect(state.messages).toBe(MESSAGES + 1);
      expect(state.tables).toEqual(complete(MESSAGES + 1));
      integrityCheck(file);
      expectActivityRight(file);
      const firstPage = (await store.bulkRead.messagePage(0, 1))[0]!;
      const word = String(firstPage.content)
        .split(/\s+/)
        .find((w) => /^[a-z]{5,}$/.test(w));
      if (word) expect((await store.searchMessages(word, { limit: -1 })).map((h) => h.id)).toContain(firstPage.id);
    } finally {
      snapshot.close();
      await store.close();
    }
  }, 120_000);

  it('into a store that already holds messages: builds the imported rows only, the rest untouched', async () => {
    const file = freshFile();
    const store: SessionStore = await openStore(`sqlite:${file}`);
    try {
      await store.createSession('existing', 'cli');
      for (let i = 0; i < 50; i++) await store.appendMessage('existing', 'user', `already here ${i} quokka`);
      const small = path.join(dir, 'small.db');
      buildHermesFile(small, 1_000);
      const db = new Database(small);
      // Source ids above the store's, as a second machine's history would have.
      db.exec('UPDATE messages SET id = id + 1000');
      db.close();
      await importHermesStateDb(small, store);
      const state = ftsState(file);
      expect(state.messages).toBe(1_050);
      expect(state.tables).toEqual(complete(1_050));
      integrityCheck(file);
      expectActivityRight(file);
      expect(await store.searchMessages('quokka', { limit: -1 })).toHaveLength(50);
    } finally {
      await store.close();
    }
  }, 60_000);
});
