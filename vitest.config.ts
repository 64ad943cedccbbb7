import { defineConfig } from 'vitest/config';
import { isPostgresJsTypeQueryRejection } from './test/helpers/postgres-js.js';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // The reliability suite has its own command (npm run test:reliability) and config.
    exclude: ['test/reliability/**', 'node_modules/**'],
    // PGlite boots a WASM Postgres per store and the process tests spawn workers: give them room.
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // Every SQLite statement is compiled by our fast path and by Drizzle, and the two must agree.
    env: { HSDB_VERIFY_SQL: '1' },
    // The one rejection postgres.js 3.4.9 drops where no caller can handle it (test/helpers/postgres-js.ts):
    // not a failure of this library. Any other unhandled error still fails the run.
    onUnhandledError: (error) => !isPostgresJsTypeQueryRejection(error),
  },
});
