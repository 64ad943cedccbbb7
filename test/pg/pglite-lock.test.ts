/**
 * One PGlite data directory, one open store: a second open (another process, or this one again) is refused
 * with a ConnectionError naming the pid that holds it, since two PGlite instances on one directory silently
 * lose each other's writes. The lock goes with close(), and a lock left by a dead process is taken over.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ConnectionError, openStore } from '../../src/index.js';
import { copyMigratedPglite } from '../backends.js';
import { spawnTs, waitForLine } from '../helpers/processes.js';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hsdb-pglite-lock-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));
let n = 0;
/** A new directory holding a migrated store (a copy: what is tested here is the lock, not PGlite's initdb). */
const freshDataDir = async () => {
  const dataDir = path.join(dir, `pgdata-${n++}`);
  await copyMigratedPglite(dataDir);
  return dataDir;
};

const refusal = (url: string) =>
  openStore(url).then(
    async (store) => {
      await store.close();
      return undefined;
    },
    (error: unknown) => error,
  );

describe('PGlite data directory lock', () => {
  it('refuses a second process while one holds the directory, and opens once it closed', async () => {
    const dataDir = await freshDataDir();
    const url = `pglite:${dataDir}`;
    const holder = spawnTs('./hold-store-worker.ts', [url, 'from-child']);
    try {
      const ready = await waitForLine(holder, (l) => l.startsWith('ready '));
      const childPid = Number(ready.split(' ')[1]);
      const error = await refusal(url);
      expect(error).toBeInstanceOf(ConnectionError);
      expect((error as ConnectionError).message).toMatch(/in use/);
      expect((error as ConnectionError).message).toContain(`process ${childPid}`);
      expect((error as ConnectionError).url).toBe(url);

      const closed = waitForLine(holder, (l) => l === 'closed');
      holder.stdin.write('close\n');
      await closed;
      await new Promise((resolve) => holder.once('exit', resolve));
      const store = await openStore(url);
      try {
        expect((await store.getSession('from-child'))?.source).toBe('worker');
      } finally {
        await store.close();
      }
    } finally {
      holder.kill('SIGKILL');
    }
  }, 120_000);

  it('refuses a second open in the same process, and reopens after close', async () => {
    const url = `pglite:${await freshDataDir()}`;
    const first = await openStore(url);
    try {
      await first.createSession('kept', 'cli');
      const error = await refusal(url);
      expect(error).toBeInstanceOf(ConnectionError);
      expect((error as ConnectionError).message).toMatch(new RegExp(`in use .*process ${process.pid}\\b`));
      // The refused open changed nothing: the first store still works.
      await first.appendMessage('kept', 'user', 'still here');
    } finally {
      await first.close();
    }
    const again = await openStore(url);
    try {
      expect((await again.getMessages('kept')).map((m) => m.content)).toEqual(['still here']);
    } finally {
      await again.close();
    }
  }, 120_000);

  it('takes over a lock whose process was killed', async () => {
    const dataDir = await freshDataDir();
    const url = `pglite:${dataDir}`;
    const holder = spawnTs('./hold-store-worker.ts', [url, 'from-child']);
    const ready = await waitForLine(holder, (l) => l.startsWith('ready '));
    const childPid = Number(ready.split(' ')[1]);
    const exited = new Promise((resolve) => holder.once('exit', resolve));
    holder.kill('SIGKILL');
    await exited;
    const lockFiles = fs.readdirSync(dataDir).filter((f) => f.includes('lock'));
    expect(lockFiles.length, 'the killed process left its lock behind').toBeGreaterThan(0);
    expect(lockFiles.map((f) => fs.readFileSync(path.join(dataDir, f), 'utf8')).join()).toContain(String(childPid));

    const store = await openStore(url);
    try {
      await store.createSession('after-takeover', 'cli');
      expect((await store.getSession('after-takeover'))?.source).toBe('cli');
      // The lock is now this process's: a second open is refused again.
      const error = await refusal(url);
      expect((error as ConnectionError).message).toContain(`process ${process.pid}`);
    } finally {
      await store.close();
    }
  }, 120_000);

  it('does not take over a lock from another host, whose pid says nothing here', async () => {
    const dataDir = await freshDataDir();
    const lockFile = path.join(dataDir, 'hermes-sessiondb.lock');
    fs.writeFileSync(lockFile, JSON.stringify({ pid: 2 ** 22 + 7, host: 'elsewhere.invalid', token: 'x' }));
    const error = await refusal(`pglite:${dataDir}`);
    expect(error).toBeInstanceOf(ConnectionError);
    expect((error as ConnectionError).message).toContain(`in use by process ${2 ** 22 + 7} on host elsewhere.invalid`);
    expect((error as ConnectionError).message).toContain(`delete ${lockFile}`);
    fs.rmSync(lockFile);
    const store = await openStore(`pglite:${dataDir}`);
    await store.close();
    expect(fs.existsSync(lockFile)).toBe(false);
  }, 120_000);
});
