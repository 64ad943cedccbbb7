/**
 * Generated Hermes histories, written once and shared: every test file (and every engine in it) that asks for the
 * same history reads one file, .tmp/corpus/<hash>.db, where <hash> covers the generator, what it reads and its
 * options. The file is only ever opened read-only (importHermesStateDb, the oracles).
 */
import { type HermesHistoryOptions, writeHermesHistoryStateDb } from '../../examples/hermes-state-db.js';
import { buildOnce, contentHash } from './build-once.js';

/** Everything the written bytes depend on: the generator and the files it reads or imports. */
const GENERATOR = [
  'examples/hermes-state-db.ts',
  'src/codecs/python-json.ts',
  'test/fixtures/hermes-v11-schema.sql',
  'drizzle/sqlite/0002_fts5_search.sql',
  'node_modules/better-sqlite3/package.json',
];

/** Path of the history `writeHermesHistoryStateDb(file, options)` writes, writing it if no run has yet. */
export function sharedHermesHistory(options: HermesHistoryOptions): Promise<string> {
  // The writer closes the database, which folds its WAL back in: the renamed file is complete on its own.
  return buildOnce('corpus', `${contentHash(GENERATOR, JSON.stringify(options))}.db`, async (partial) =>
    writeHermesHistoryStateDb(partial, options),
  );
}

/** ~11,000 sessions with compression chains, branches and resumed sessions: the listing oracle's history. */
export const LISTING_HISTORY: HermesHistoryOptions = {
  messages: 110_000,
  lineage: true,
  sessionSize: { min: 0, span: 20 },
};
