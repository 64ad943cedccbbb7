/**
 * A PGlite data directory belongs to one PGlite instance. Two (in two processes, or twice in one) each keep
 * their own copy of the database in memory and write over each other's files: one side's writes are lost
 * without an error. Opening takes `hermes-sessiondb.lock` in the directory, created with O_EXCL and
 * holding the owner's pid and host; close() removes it. A lock whose process is gone (a crash, a kill) is
 * taken over.
 */
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export const LOCK_FILE = 'hermes-sessiondb.lock';

/** A lock file that cannot be read is only trusted this long (its owner writes it right after creating it). */
const UNREADABLE_GRACE_MS = 10_000;

interface Owner {
  pid: number;
  host: string;
  token: string;
}

export interface DataDirLock {
  /** Remove the lock file if it is still ours. Never throws. */
  release(): void;
}

/** Why the directory cannot be locked; the message says who holds it. */
export class DataDirInUseError extends Error {}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: the process exists but belongs to another user.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function parseOwner(text: string): Owner | undefined {
  try {
    const value = JSON.parse(text) as Partial<Owner>;
    if (Number.isInteger(value.pid) && typeof value.host === 'string' && typeof value.token === 'string')
      return value as Owner;
  } catch {
    // fall through: not ours, or half-written
  }
  return undefined;
}

/** The lock file's text, or undefined when it is gone. */
function readLock(file: string): string | undefined {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

/** Undefined when the lock is stale (may be taken over); otherwise why it is not. */
function holder(file: string, text: string): string | undefined {
  const owner = parseOwner(text);
  if (!owner) {
    const age = Date.now() - fs.statSync(file).mtimeMs;
    return age < UNREADABLE_GRACE_MS ? 'another store that is opening it' : undefined;
  }
  const self = owner.pid === process.pid ? ' (this process: close the other store first)' : '';
  // On another host the pid says nothing here (a shared or copied directory): only the owner knows.
  if (owner.host !== os.hostname()) return `process ${owner.pid} on host ${owner.host}`;
  return processAlive(owner.pid) ? `process ${owner.pid}${self}` : undefined;
}

/** Take the directory's lock (creating the directory if needed), or throw DataDirInUseError naming the holder. */
export function lockDataDir(dataDir: string): DataDirLock {
  fs.mkdirSync(dataDir, { recursive: true });
  const file = path.join(dataDir, LOCK_FILE);
  const me: Owner = { pid: process.pid, host: os.hostname(), token: randomUUID() };
  for (let attempt = 0; attempt < 5; attempt++) {
    let fd: number;
    try {
      fd = fs.openSync(file, 'wx', 0o600);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const text = readLock(file);
      if (text === undefined) continue; // released meanwhile: try again
      const who = holder(file, text);
      if (who !== undefined) {
        throw new DataDirInUseError(
          `the data directory is in use by ${who}. Two PGlite stores on one directory lose each other's writes. ` +
            `If that process is gone, delete ${file}.`,
        );
      }
      // Stale: remove it, unless another opener replaced it since it was read (then look again).
      if (readLock(file) === text) fs.rmSync(file, { force: true });
      continue;
    }
    try {
      fs.writeSync(fd, JSON.stringify(me));
    } catch (error) {
      fs.rmSync(file, { force: true });
      throw error;
    } finally {
      fs.closeSync(fd);
    }
    return {
      release: () => {
        try {
          if (parseOwner(readLock(file) ?? '')?.token === me.token) fs.rmSync(file, { force: true });
        } catch {
          // A lock that cannot be removed is stale once this process ends.
        }
      },
    };
  }
  throw new DataDirInUseError(`could not take ${file}: other stores kept opening the directory at the same time`);
}
