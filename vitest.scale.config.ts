import { defineConfig } from 'vitest/config';
import { LongestFirstSequencer } from './test/sequencer.js';
import { SCALE, SCALE_TIMED, SHARED_TEST_OPTIONS } from './test/suites.js';

/** `npm run test:scale`: the oracles on 20,000+ messages, the huge-message suites and the packed package (test/suites.ts). */
export default defineConfig({
  test: {
    ...SHARED_TEST_OPTIONS,
    sequence: { sequencer: LongestFirstSequencer },
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
