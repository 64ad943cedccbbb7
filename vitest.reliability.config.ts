import { defineConfig } from 'vitest/config';
import { isPostgresJsTypeQueryRejection } from './test/helpers/postgres-js.js';

// `npm run test:reliability`: kills, contention, faults and hostile input. Slow by design, run by CI.
export default defineConfig({
  test: {
    include: ['test/reliability/**/*.test.ts'],
    testTimeout: 300_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // The tests spawn many processes of their own; running files side by side on 2 cores only adds noise.
    fileParallelism: false,
    // The one rejection postgres.js 3.4.9 drops where no caller can handle it (test/helpers/postgres-js.ts):
    // not a failure of this library. Any other unhandled error still fails the run.
    onUnhandledError: (error) => !isPostgresJsTypeQueryRejection(error),
  },
});
