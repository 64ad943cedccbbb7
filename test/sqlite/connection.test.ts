/** SQLite connection settings and file handling (file-backed stores). */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import Database from 'better-sqlite3';
import { ConnectionError, type SqliteBackend, StoreBusyError, openStore } from '../../src/index.js';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hsdb-conn-'));
const file = (name: string) => path.join(dir, name);
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('SQLite connection', () => {
  it('uses WAL, synchronous=FULL, foreign keys and a busy timeout by default', async () => {
    const store = await openStore(`sqlite:${file('defaults.db')}`);
    try {
      const { client, journalMode } = store.backend as SqliteBackend;
      expect(journalMode).toBe('wal');
      expect(client.pragma('synchronous', { simple: true })).toBe(2); // FULL
      expect(client.pragma('foreign_keys', { simple: true })).toBe(1);
      expect(client.pragma('busy_timeout', { simple: true })).toBe(5);
    } finally {
      await store.close();
    }
  });

  it('takes synchronous=NORMAL, a DELETE journal and a busy timeout when asked', async () => {
    const store = await openStore(file('options.db'), {
      synchronous: 'NORMAL',
      journalMode: 'DELETE',
      busyTimeoutMs: 250,
    });
    try {
      const { client, journalMode } = store.backend as SqliteBackend;
      expect(journalMode).toBe('delete');
      expect(client.pragma('synchronous', { simple: true })).toBe(1);
      expect(client.pragma('busy_timeout', { simple: true })).toBe(250);
    } finally {
      await store.close();
    }
  });

  it('creates the database, its WAL and shared-memory files readable by the owner only', async () => {
    const target = file('private.db');
    const store = await openStore(`sqlite:${target}`);
    try {
      (store.backend as SqliteBackend).client.prepare("INSERT INTO state_meta (key, value) VALUES ('k', 'v')").run();
      for (const f of [target, `${target}-wal`, `${target}-shm`]) {
        expect(fs.statSync(f).mode & 0o777, f).toBe(0o600);
      }
    } finally {
      await store.close();
    }
  });

  it('keeps data across close and reopen, and the reopen migrates nothing', async () => {
    const target = file('reopen.db');
    const first = await openStore(target);
    (first.backend as SqliteBackend).client.prepare("INSERT INTO state_meta (key, value) VALUES ('k', 'v')").run();
    await first.close();
    const second = await openStore(target);
    try {
      expect(await second.migrate()).toMatchObject({ applied: [] });
      const { client } = second.backend as SqliteBackend;
      expect(client.prepare("SELECT value FROM state_meta WHERE key = 'k'").pluck().get()).toBe('v');
    } finally {
      await second.close();
    }
  });

  it('opens read-only without writing, and refuses writes there', async () => {
    const target = file('ro.db');
    await (await openStore(target)).close();
    const before = fs.readFileSync(target);
    const store = await openStore(target, { readonly: true });
    try {
      const { client } = store.backend as SqliteBackend;
      expect(() => client.prepare("INSERT INTO state_meta (key, value) VALUES ('k', 'v')").run()).toThrow(/readonly/);
    } finally {
      await store.close();
    }
    expect(fs.readFileSync(target).equals(before)).toBe(true);
  });

  it('waits for another writer, then gives up with StoreBusyError after the deadline, writing nothing', async () => {
    const target = file('busy.db');
    const store = await openStore(target, { busyTimeoutMs: 20, writeDeadlineMs: 300 });
    await store.createSession('s', 'cli');
    const other = new Database(target);
    other.exec('BEGIN IMMEDIATE');
    try {
      const started = Date.now();
      const error = await store.appendMessage('s', 'user', 'blocked').catch((e: unknown) => e);
      expect(error).toBeInstanceOf(StoreBusyError);
      expect(Date.now() - started).toBeGreaterThanOrEqual(300);
      // A writer that lets go before the deadline is waited for.
      // Opening an up-to-date store does not need the write lock.
      const patient = await openStore(target, { busyTimeoutMs: 20, writeDeadlineMs: 5000 });
      setTimeout(() => other.exec('COMMIT'), 150);
      expect(await patient.appendMessage('s', 'user', 'waited')).toBeGreaterThan(0);
      await patient.close();
    } finally {
      if (other.inTransaction) other.exec('COMMIT');
      other.close();
    }
    expect((await store.getMessages('s')).map((m) => m.content)).toEqual(['waited']);
    await store.close();
  });

  it('gives a typed error naming the file for a missing directory, a non-database file and a truncated one', async () => {
    const missingDir = file('no/such/dir/x.db');
    await expect(openStore(missingDir)).rejects.toMatchObject({ code: 'CONNECTION', url: `sqlite:${missingDir}` });
    expect(fs.existsSync(path.dirname(missingDir))).toBe(false);

    const notDb = file('not-a-db.db');
    fs.writeFileSync(notDb, 'this is a text file, not SQLite '.repeat(200));
    const error = await openStore(notDb).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConnectionError);
    expect((error as ConnectionError).message).toContain(notDb);
    expect((error as ConnectionError).message).toMatch(/not a database/);

    const good = file('to-truncate.db');
    await (await openStore(good, { journalMode: 'DELETE' })).close();
    const bytes = fs.readFileSync(good);
    const truncated = file('truncated.db');
    fs.writeFileSync(truncated, bytes.subarray(0, 50));
    await expect(openStore(truncated)).rejects.toBeInstanceOf(ConnectionError);
  });
});

describe('SQLite maintenance worker in an app started with node --input-type=module -e', () => {
  it('runs long writes there too (the worker does not inherit --input-type)', () => {
    const db = file('input-type.db');
    const entry = new URL('../../src/index.ts', import.meta.url).href;
    const script = `import { openStore } from ${JSON.stringify(entry)};
      const store = await openStore(${JSON.stringify(`sqlite:${db}`)});
      await store.createSession('a', 'cli');
      await store.appendMessage('a', 'user', 'hi');
      console.log(JSON.stringify({ deleted: await store.deleteSession('a') }));
      await store.close();`;
    const out = execFileSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      cwd: fileURLToPath(new URL('../..', import.meta.url)),
      encoding: 'utf8',
    });
    expect(JSON.parse(out.trim().split('\n').pop()!)).toEqual({ deleted: true });
  });
});
