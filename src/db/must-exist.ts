/**
 * `openStore(url, { mustExist: true })`: open a store that is already there, never create one. A PGlite
 * directory is checked before anything is opened (opening would create and initialise it); an SQLite file where
 * it is opened; a server database always "exists", so there the test is whether it holds our migration history.
 */
import fs from 'node:fs';
import path from 'node:path';
import { StoreNotFoundError } from '../errors.js';
import type { Backend } from './backend.js';
import type { StoreLocation } from './url.js';

/** PGlite (like initdb) writes this file first; a directory without it holds no database yet. */
const PG_DATA_DIR_MARKER = 'PG_VERSION';

/** Refuse, before opening, a location that opening would create: a missing file or directory, or an in-memory database. */
export function assertLocationExists(location: StoreLocation): void {
  if (location.backend === 'postgres' || location.backend === 'mysql') return; // checked once connected: see assertHoldsStore
  if (location.backend === 'sqlite') {
    // A file is checked where it is opened (sqlite/open.ts: better-sqlite3's fileMustExist, also for readonly).
    if (location.memory)
      throw new StoreNotFoundError('sqlite::memory:', 'MISSING', ':memory:', 'an in-memory database is always new');
    return;
  }
  if (location.dataDir === null) {
    throw new StoreNotFoundError('pglite:memory', 'MISSING', 'memory', 'an in-memory database is always new');
  }
  const where = `pglite:${location.dataDir}`;
  const dir = path.resolve(location.dataDir);
  const stat = fs.statSync(dir, { throwIfNoEntry: false });
  if (stat === undefined) throw new StoreNotFoundError(where, 'MISSING', dir, `no such directory ${dir}`);
  if (!stat.isDirectory()) throw new StoreNotFoundError(where, 'NO_STORE', dir, `${dir} is not a directory`);
  if (!fs.existsSync(path.join(dir, PG_DATA_DIR_MARKER))) {
    throw new StoreNotFoundError(where, 'NO_STORE', dir, `${dir} holds no PGlite database (no ${PG_DATA_DIR_MARKER})`);
  }
}

/** Refuse, once connected, a server database without hermes-sessiondb's migration history (an empty database). */
export async function assertHoldsStore(backend: Pick<Backend, 'url' | 'migrationStatus'>): Promise<void> {
  const status = await backend.migrationStatus();
  if (status.applied.length === 0 && status.unknownHashes.length === 0) {
    throw new StoreNotFoundError(
      backend.url,
      'NO_STORE',
      backend.url,
      'the database holds no hermes-sessiondb store (no migration history)',
    );
  }
}
