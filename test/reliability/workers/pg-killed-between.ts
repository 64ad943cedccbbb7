/**
 * Child process: an app's transaction through `store.backend.transaction()` whose connection the server
 * terminates while the body awaits something else between two statements. Prints one JSON line per step;
 * a crash of the driver shows as this process' exit code.
 *
 * argv: url, 'pool' (a store on a URL: our own pool) or 'client' (a postgres.js client the app passes in),
 * and 'statement' (the body sends another statement after the wait) or 'commit' (it returns: COMMIT next).
 */
import net from 'node:net';
import { sql } from 'drizzle-orm';
import postgres from 'postgres';
import { openStore, postgresSessionSettings } from '../../../src/index.js';
import { rowsOf } from '../../../src/db/pg/open.js';

const [url, target, next] = process.argv.slice(2) as [string, 'pool' | 'client', 'statement' | 'commit'];
const say = (step: string, value: unknown) => process.stdout.write(`${JSON.stringify({ step, value })}\n`);

// Observation only: count the sockets that have emitted 'close'. postgres.js handles a connection's close in
// its 'close' listener, so once emit returns, the driver has dropped that socket.
let socketsClosed = 0;
let onSocketClosed: () => void = () => {};
const emit = net.Socket.prototype.emit;
net.Socket.prototype.emit = function (this: net.Socket, event: string | symbol, ...args: unknown[]) {
  const handled = Reflect.apply(emit, this, [event, ...args]) as boolean;
  if (event === 'close') {
    socketsClosed++;
    onSocketClosed();
  }
  return handled;
} as typeof emit;

const app =
  target === 'client' ? postgres(url, { max: 2, onnotice: () => {}, connection: postgresSessionSettings }) : undefined;
const killer = postgres(url, { max: 1, onnotice: () => {} });
const store = app ? await openStore(app) : await openStore(url, { poolSize: 2 });
if (store.dialect !== 'pg') throw new Error('a Postgres store was expected');
await store.backend.execute(sql`CREATE TABLE probe (v text)`);

/** Terminate the backend, and wait until its socket's close has reached the driver (nothing else closes). */
async function terminate(pid: number): Promise<void> {
  const before = socketsClosed;
  const closed = new Promise<void>((resolve) => {
    onSocketClosed = () => socketsClosed > before && resolve();
  });
  await killer`SELECT pg_terminate_backend(${pid})`;
  if (socketsClosed === before) await closed;
}

const outcome = await store.backend
  .transaction(async (tx) => {
    const [row] = rowsOf<{ pid: number }>(await tx.execute(sql`SELECT pg_backend_pid() AS pid`));
    await tx.execute(sql`INSERT INTO probe VALUES ('first')`);
    await terminate(row!.pid);
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
