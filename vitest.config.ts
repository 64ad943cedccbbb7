import { defineConfig } from 'vitest/config';
import { LongestFirstSequencer } from './test/sequencer.js';
import { RELIABILITY, SCALE, SHARED_TEST_OPTIONS, TIMED } from './test/suites.js';

/** `npm test`: every engine, every contract. The scale and package suites are `npm run test:scale` (test/suites.ts). */
export default defineConfig({
  test: {
    ...SHARED_TEST_OPTIONS,
    sequence: { sequencer: LongestFirstSequencer },
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
          // A worker runs file after file in one module graph: what the files import is loaded once per
          // worker, not once per file. Test files therefore keep no state in modules they share (no vi.mock,
          // no env changes); what a file must run in a fresh process it spawns itself.
          isolate: false,
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
