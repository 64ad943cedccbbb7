import { defineConfig } from 'vitest/config';
import { isPostgresJsTypeQueryRejection } from './test/helpers/postgres-js.js';
import { SCALE, SCALE_TIMED } from './test/suites.js';

/** `npm run test:scale`: the oracles on 20,000+ messages, the huge-message suites and the packed package (test/suites.ts). */
export default defineConfig({
  test: {
    // As in vitest.config.ts: the slow tests and hooks give their own timeouts.
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    env: { HSDB_VERIFY_SQL: '1' },
    // See vitest.config.ts.
    onUnhandledError: (error) => !isPostgresJsTypeQueryRejection(error),
    projects: [
      {
        extends: true,
        test: {
          name: 'scale',
          include: SCALE,
          exclude: [...SCALE_TIMED, 'node_modules/**'],
          // Most of this time is a server importing or npm installing: two files at a time.
          maxWorkers: 2,
          sequence: { groupOrder: 0 },
        },
      },
      {
        extends: true,
        test: {
          name: 'scale-timed',
          include: SCALE_TIMED,
          fileParallelism: false,
          sequence: { groupOrder: 1 },
        },
      },
    ],
  },
});
