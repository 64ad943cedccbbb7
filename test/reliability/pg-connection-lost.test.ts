/**
 * Postgres: the server closes a transaction's connection while nothing is in flight on it (the app's body
 * awaits something else between two statements). postgres.js 3.4.9 would write the next statement, or COMMIT,
 * to the closed socket from a timer and crash the process; here each is refused with a ConnectionError. Run in
 * a child process, so that a crash is seen as the child's exit rather than taking the test runner down.
 *
 * Also the other postgres.js crash: the rejection it drops when its startup type query fails.
 */
import postgres from 'postgres';
import { afterAll, describe, expect, it } from 'vitest';
import { ConnectionError, openStore } from '../../src/index.js';
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
        // Side by side: each case is its own child process and database.
        it.concurrent(`${who}: ${what} is refused with a ConnectionError, nothing is committed, the store keeps working`, async ({
          expect,
        }) => {
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

describe.skipIf(!pgAvailable)(
  `Postgres: postgres.js' startup type query fails${pgAvailable ? '' : ` (skipped: ${pg.unavailable})`}`,
  () => {
    // postgres.js drops that query's rejection (test/helpers/postgres-js.ts): no caller can handle it, so it
    // reaches this process as an unhandled rejection, which fails the run unless the test configs'
    // onUnhandledError recognises it (and only it).
    it('openStore rejects with a ConnectionError, and the rejection postgres.js drops does not fail the run', async () => {
      const url = await pg.freshUrl();
      const role = `hsdb_no_pg_type_${process.pid}`;
      const admin = postgres(url, { max: 1, onnotice: () => {} });
      try {
        // pg_type is a per-database catalog: only this database's reads of it are refused to the new role.
        await admin.unsafe('REVOKE SELECT ON pg_catalog.pg_type FROM PUBLIC');
        await admin.unsafe(`CREATE ROLE ${role} LOGIN`);
        const as = new URL(url);
        as.username = role;
        const error = await openStore(as.toString()).catch((e: unknown) => e);
        expect(error).toBeInstanceOf(ConnectionError);
        expect((error as Error).message).toMatch(/permission denied for table pg_type/);
        // The dropped rejection is reported while this test still runs.
        await new Promise((r) => setTimeout(r, 50));
      } finally {
        await admin.end();
        const server = postgres(process.env.DATABASE_URL ?? 'postgres://root@127.0.0.1:5432/test', { max: 1 });
        await server.unsafe(`DROP ROLE IF EXISTS ${role}`).finally(() => server.end());
      }
    });
  },
);
