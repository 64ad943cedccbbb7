/**
 * Postgres: the server closes a transaction's connection while nothing is in flight on it (the app's body
 * awaits something else between two statements). postgres.js 3.4.9 would write the next statement, or COMMIT,
 * to the closed socket from a timer and crash the process; here each is refused with a ConnectionError. Run in
 * a child process, so that a crash is seen as the child's exit rather than taking the test runner down.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { postgresHarness, reportAvailability } from '../backends.js';
import { exited, spawnTs } from '../helpers/processes.js';

const pg = await postgresHarness();
const pgAvailable = reportAvailability(pg);
afterAll(() => pg.cleanup());

type Step = { step: string; value: unknown };

describe.skipIf(!pgAvailable)(
  `Postgres: a transaction's connection closed between two statements${pgAvailable ? '' : ` (skipped: ${pg.unavailable})`}`,
  () => {
    for (const target of ['pool', 'client'] as const) {
      for (const next of ['statement', 'commit'] as const) {
        const who = target === 'pool' ? 'a store on a URL' : "an app's postgres.js client";
        const what = next === 'statement' ? 'the next statement' : 'COMMIT';
        it(`${who}: ${what} is refused with a ConnectionError, nothing is committed, the store keeps working`, async () => {
          const url = await pg.freshUrl();
          const child = spawnTs('../reliability/workers/pg-killed-between.ts', [url, target, next]);
          const { code, lines, stderr } = await exited(child);
          expect(code, `the child crashed:\n${stderr}`).toBe(0);
          const steps = new Map(
            lines
              .filter((l) => l.startsWith('{'))
              .map((l) => JSON.parse(l) as Step)
              .map((s) => [s.step, s.value]),
          );
          expect(steps.get('outcome')).toMatchObject({
            rejected: 'ConnectionError',
            code: 'CONNECTION',
            message: expect.stringContaining(next === 'statement' ? 'next statement' : 'COMMIT'),
          });
          expect(steps.get('probe rows')).toBe(0);
          expect(steps.get('after')).toEqual(['still here']);
          expect(steps.get('next transaction')).toBe(1);
          expect(steps.get('done')).toBe(true);
        });
      }
    }
  },
);
