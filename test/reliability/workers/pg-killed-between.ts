/**
 * Child process: an app's transaction through `store.backend.transaction()` whose connection the server
 * terminates while the body awaits something else between two statements. Prints one JSON line per step;
 * a crash of the driver shows as this process' exit code.
 *
 * argv: url, 'pool' (a store on a URL: our own pool) or 'client' (a postgres.js client the app passes in),
 * and 'statement' (the body sends another statement after the wait) or 'commit' (it returns: COMMIT next).
 */
import { sql } from 'drizzle-orm';
import postgres from 'postgres';
import { openStore, postgresSessionSettings } from '../../../src/index.js';
import { rowsOf } from '../../../src/db/pg/open.js';

const [url, target, next] = process.argv.slice(2) as [string, 'pool' | 'client', 'statement' | 'commit'];
const say = (step: string, value: unknown) => process.stdout.write(`${JSON.stringify({ step, value })}\n`);

let closes = 0;
let closed: () => void = () => {};
const app =
  target === 'client'
    ? postgres(url, {
        max: 2,
        onnotice: () => {},
        connection: postgresSessionSettings,
        onclose: () => {
          closes++;
          closed();
        },
      })
    : undefined;
const killer = postgres(url, { max: 1, onnotice: () => {} });
const store = app ? await openStore(app) : await openStore(url, { poolSize: 2 });
if (store.dialect !== 'pg') throw new Error('a Postgres store was expected');
await store.backend.execute(sql`CREATE TABLE probe (v text)`);

/** Until the killed connection's close has reached the driver (the app's client says so; our pool does not). */
async function connectionGone(pid: number): Promise<void> {
  if (app) {
    if (closes === 0) await new Promise<void>((resolve) => (closed = resolve));
    return;
  }
  for (let i = 0; i < 400; i++) {
    const [row] = await killer`SELECT count(*)::int AS n FROM pg_stat_activity WHERE pid = ${pid}`;
    if (row?.n === 0) break;
    await new Promise((r) => setTimeout(r, 10));
  }
  // The backend is gone from the server's view: give its socket's close time to reach this process.
  await new Promise((r) => setTimeout(r, 300));
}

const outcome = await store.backend
  .transaction(async (tx) => {
    const [row] = rowsOf<{ pid: number }>(await tx.execute(sql`SELECT pg_backend_pid() AS pid`));
    await tx.execute(sql`INSERT INTO probe VALUES ('first')`);
    await killer`SELECT pg_terminate_backend(${row!.pid})`;
    await connectionGone(row!.pid);
    if (next === 'statement') await tx.execute(sql`INSERT INTO probe VALUES ('second')`);
    return 'committed';
  })
  .then(
    (value) => ({ resolved: value }),
    (error: unknown) => ({
      rejected: error instanceof Error ? error.name : String(error),
      code: (error as { code?: unknown }).code,
      message: error instanceof Error ? error.message : undefined,
    }),
  );
say('outcome', outcome);

// Give a write left to a timer on the dead connection its chance to fire while the store is used again.
await new Promise((r) => setTimeout(r, 100));
const [count] = rowsOf<{ n: number }>(await store.backend.execute(sql`SELECT count(*)::int AS n FROM probe`));
say('probe rows', count!.n);
await store.createSession('after', 'cli');
await store.appendMessage('after', 'user', 'still here');
say(
  'after',
  (await store.getMessages('after')).map((m) => m.content),
);
const again = await store.backend.transaction(async (tx) => {
  await tx.execute(sql`INSERT INTO probe VALUES ('again')`);
  return rowsOf<{ n: number }>(await tx.execute(sql`SELECT count(*)::int AS n FROM probe`))[0]!.n;
});
say('next transaction', again);
await new Promise((r) => setTimeout(r, 100));
await store.close();
await killer.end();
await app?.end();
say('done', true);
