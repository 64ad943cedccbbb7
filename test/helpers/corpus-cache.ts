/**
 * Generated Hermes histories, written once and shared: every test file (and every engine in it) that asks for the
 * same history reads one file, .tmp/corpus/<hash>.db, where <hash> covers the generator, what it reads and its
 * options. Vitest runs files in parallel forks, so a directory lock keeps it to one writer; a later run reuses it.
 * The file is only ever opened read-only (importHermesStateDb, the oracles): tests that write make their own copy.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { type HermesHistoryOptions, writeHermesHistoryStateDb } from '../../examples/hermes-state-db.js';

const ROOT = path.resolve(import.meta.dirname, '../..');

/** Everything the written bytes depend on: the generator and the files it reads or imports. */
const GENERATOR = [
  'examples/hermes-state-db.ts',
  'src/codecs/python-json.ts',
  'test/fixtures/hermes-v11-schema.sql',
  'drizzle/sqlite/0002_fts5_search.sql',
  'node_modules/better-sqlite3/package.json',
];

function historyHash(options: HermesHistoryOptions): string {
  const hash = crypto.createHash('sha256');
  for (const rel of GENERATOR) hash.update(rel).update('\0').update(fs.readFileSync(path.join(ROOT, rel))).update('\0');
  hash.update(JSON.stringify(options));
  return hash.digest('hex').slice(0, 16);
}

/** Path of the history `writeHermesHistoryStateDb(file, options)` writes, writing it if no run has yet. */
export async function sharedHermesHistory(options: HermesHistoryOptions): Promise<string> {
  const dir = path.join(ROOT, '.tmp', 'corpus');
  const file = path.join(dir, `${historyHash(options)}.db`);
  const lock = `${file}.lock`;
  fs.mkdirSync(dir, { recursive: true });
  for (let waited = 0; ; waited += 200) {
    if (fs.existsSync(file)) return file;
    try {
      fs.mkdirSync(lock);
      break;
    } catch {
      if (waited > 600_000) throw new Error(`gave up waiting for another process writing ${file} (lock ${lock})`);
      await sleep(200);
    }
  }
  try {
    if (fs.existsSync(file)) return file;
    // Written beside, then renamed: a reader never sees a half-written file.
    const partial = `${file}.partial`;
    fs.rmSync(partial, { force: true });
    writeHermesHistoryStateDb(partial, options);
    for (const suffix of ['-wal', '-shm']) fs.rmSync(`${partial}${suffix}`, { force: true });
    fs.renameSync(partial, file);
    return file;
  } finally {
    fs.rmSync(lock, { recursive: true, force: true });
  }
}

/** ~11,000 sessions with compression chains, branches and resumed sessions: the listing oracle's history. */
export const LISTING_HISTORY: HermesHistoryOptions = {
  messages: 110_000,
  lineage: true,
  sessionSize: { min: 0, span: 20 },
};
