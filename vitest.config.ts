import { defineConfig } from 'vitest/config';
import { isPostgresJsTypeQueryRejection } from './test/helpers/postgres-js.js';
import { RELIABILITY, SCALE, TIMED } from './test/suites.js';

/** `npm test`: every engine, every contract. The scale and package suites are `npm run test:scale` (test/suites.ts). */
export default defineConfig({
  test: {
    // PGlite boots a WASM Postgres per store and the process tests spawn workers: give them room.
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // Every SQLite statement is compiled by our fast path and by Drizzle, and the two must agree.
    env: { HSDB_VERIFY_SQL: '1' },
    // The one rejection postgres.js 3.4.9 drops where no caller can handle it (test/helpers/postgres-js.ts):
    // not a failure of this library. Any other unhandled error still fails the run.
    onUnhandledError: (error) => !isPostgresJsTypeQueryRejection(error),
    projects: [
      {
        extends: true,
        test: {
          name: 'main',
          include: ['test/**/*.test.ts'],
          exclude: [...RELIABILITY, ...SCALE, 'node_modules/**', ...TIMED],
          // Two files at a time on 2 cores: much of a file's time is spent waiting on a server or a child
          // process (Vitest's default would be one, the cores less one).
          maxWorkers: 2,
          sequence: { groupOrder: 0 },
        },
      },
      {
        extends: true,
        test: {
          name: 'timed',
          include: TIMED,
          fileParallelism: false,
          sequence: { groupOrder: 1 },
        },
      },
    ],
  },
});
