/**
 * Which test files run under which command. `npm test` (vitest.config.ts) is every engine and every contract;
 * `npm run test:scale` (vitest.scale.config.ts) is the work that only scale or the packed package shows: the
 * oracles on 20,000+ message histories, the huge-message suites, the tarball installed into apps, many processes
 * at once, and the contract suite on PGlite in a schema. CI runs both.
 */

import { isPostgresJsTypeQueryRejection } from './helpers/postgres-js.js';

/**
 * Scale and package suites, many processes at once (16 claimers, 4 × 500 appends; the contract's own
 * multi-process tests stay in `npm test`), and the contract suite once more on an axis `npm test` already
 * covers (PGlite with every table in a schema: the schema is covered by the Postgres server's run, PGlite by
 * its own): their own command, run by CI after `npm test`.
 */
export const SCALE = [
  'test/backend.pglite-schema.test.ts',
  'test/concurrency.test.ts',
  'test/listing-oracle.test.ts',
  'test/search-oracle.test.ts',
  'test/search-multilingual-oracle.test.ts',
  'test/search/blocks-scale.test.ts',
  'test/mysql/import-scale.test.ts',
  'test/pg/huge-messages.test.ts',
  'test/search-huge-rows.test.ts',
  'test/package/**/*.test.ts',
  'test/published-types.test.ts',
];

/** Files that time their own work (elapsed or event-loop stalls): they run alone, after the rest of their command. */
export const TIMED = ['test/search/fts5-snippet-huge.test.ts', 'test/export.test.ts'];
export const SCALE_TIMED = ['test/search-huge-rows.test.ts'];

/**
 * Files that run longest, longest first, per command (test/sequencer.ts starts them first, so no long file
 * starts last and runs alone at the end). Figures from a CI run; an outdated order only costs balance, never coverage.
 */
export const LONGEST_FIRST = [
  // test:scale
  'test/package/drizzle-app.test.ts',
  'test/listing-oracle.test.ts',
  'test/backend.pglite-schema.test.ts',
  'test/search-oracle.test.ts',
  'test/package/certify.test.ts',
  'test/concurrency.test.ts',
  // npm test
  'test/backend.pglite.test.ts',
  'test/search-parity.test.ts',
  'test/search-strategies.test.ts',
  'test/search/fts5-snippet.test.ts',
  'test/backend.pg-schema.test.ts',
  'test/backend.mariadb.test.ts',
  'test/import.test.ts',
  'test/backend.postgres.test.ts',
  'test/cli.test.ts',
  'test/mysql/search.test.ts',
  'test/mysql/migrate.test.ts',
  'test/pg/append-statement.test.ts',
  'test/copy.test.ts',
  'test/conversation-oracle.test.ts',
  'test/import-resume.test.ts',
  'test/pg/migration-history.test.ts',
  'test/open-clients.test.ts',
  'test/pg/blocks-migration.test.ts',
  'test/pg/pglite-lock.test.ts',
  'test/backend.sqlite-file.test.ts',
  'test/import-id-reservation.test.ts',
  'test/import-deferred-index.test.ts',
  'test/transfer-limits.test.ts',
  'test/pg/schema-option.test.ts',
  'test/pg/counters-migration.test.ts',
  'test/pg/postgres-schema.test.ts',
  'test/lazy-loading.test.ts',
  'test/demo.test.ts',
  'test/backend.sqlite-memory.test.ts',
];

/** Run by `npm run test:reliability` (vitest.reliability.config.ts). */
export const RELIABILITY = ['test/reliability/**'];

/**
 * Options `npm test` and `npm run test:scale` share. PGlite boots a WASM Postgres per store and the process
 * tests spawn workers: room for them. Every SQLite statement is compiled by our fast path and by Drizzle, and
 * the two must agree (HSDB_VERIFY_SQL). The one rejection postgres.js 3.4.9 drops where no caller can handle
 * it (test/helpers/postgres-js.ts) is not a failure of this library; any other unhandled error fails the run.
 */
export const SHARED_TEST_OPTIONS = {
  testTimeout: 30_000,
  hookTimeout: 60_000,
  pool: 'forks',
  env: { HSDB_VERIFY_SQL: '1' },
  onUnhandledError: (error: unknown) => !isPostgresJsTypeQueryRejection(error),
} as const;
