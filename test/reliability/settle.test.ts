/**
 * Every call settles, and settles truthfully, under contention and faults. SQLite: while another process
 * holds the write lock, 200 un-awaited appends still commit in call order, and close() waits for writes
 * queued behind the lock. Postgres: close() with writes and reads in flight while the server terminates
 * the store's connections settles every call (none hangs); un-awaited appends to one session keep their
 * order over a pool of 10 while other sessions are written beside them.
 */
import postgres from 'postgres';
import { afterAll, describe, expect, it } from 'vitest';
import { DatabaseError, StoreClosedError, openStore } from '../../src/index.js';
import { postgresHarness, reportAvailability, sqliteFileHarness } from '../backends.js';
import { spawnTs, waitForLine } from '../helpers/processes.js';
import { PAST_STARTUP_SQL } from '../helpers/postgres-js.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Start a process that holds the file's write lock for `holdMs` once told to; resolves when it holds it. */
async function holdWriteLock(url: string, holdMs: number): Promise<{ released: Promise<string> }> {
  const child = spawnTs('../reliability/workers/lock-holder.ts', [url.replace(/^sqlite:/, ''), String(holdMs)]);
  await waitForLine(child, (l) => l === 'ready');
  const locked = waitForLine(child, (l) => l === 'locked');
  child.stdin.write('lock\n');
  await locked;
  return { released: waitForLine(child, (l) => l === 'released') };
}

describe('SQLite: another process holds the write lock', () => {
  const h = sqliteFileHarness();
  afterAll(() => h.cleanup());

  it('200 un-awaited appends from one caller commit in call order', async () => {
    const url = await h.freshUrl();
    const store = await openStore(url);
    try {
      await store.createSession('s', 'cli');
      const lock = await holdWriteLock(url, 1500);
      // Fired over many turns of the event loop, so several batches wait behind the lock at once.
      const calls: Promise<number>[] = [];
      for (let i = 0; i < 200; i++) {
        calls.push(store.appendMessage('s', i % 2 ? 'assistant' : 'user', `message ${i}`));
        if (i % 10 === 9) await sleep(20);
      }
      const ids = await Promise.all(calls);
      await lock.released;
      expect(ids).toEqual([...ids].sort((a, b) => a - b));
      const stored = await store.getMessages('s');
      expect(stored.map((m) => m.content)).toEqual(Array.from({ length: 200 }, (_, i) => `message ${i}`));
      expect(stored.map((m) => m.id)).toEqual(ids);
      expect((await store.getSession('s'))!.messageCount).toBe(200);
    } finally {
      await store.close();
    }
  });

  it('close() waits for writes queued behind the lock; each one is then written, later calls refused', async () => {
    const url = await h.freshUrl();
    const store = await openStore(url);
    await store.createSession('s', 'cli');
    const lock = await holdWriteLock(url, 1000);
    const appends = Array.from({ length: 50 }, (_, i) => store.appendMessage('s', 'user', `queued ${i}`));
    const tokens = Array.from({ length: 5 }, () => store.updateTokenCounts('s', { inputTokens: 2 }));
    await sleep(50); // the first batch is now waiting for the lock
    const closing = store.close();
    await expect(store.appendMessage('s', 'user', 'too late')).rejects.toBeInstanceOf(StoreClosedError);
    await closing;
    const ids = await Promise.all(appends);
    await Promise.all(tokens);
    await lock.released;

    const again = await openStore(url);
    try {
      const stored = await again.getMessages('s');
      expect(stored.map((m) => m.content)).toEqual(Array.from({ length: 50 }, (_, i) => `queued ${i}`));
      expect(stored.map((m) => m.id)).toEqual(ids);
      expect(await again.getSession('s')).toMatchObject({ messageCount: 50, inputTokens: 10 });
    } finally {
      await again.close();
    }
  });
});

const pg = await postgresHarness();
const pgAvailable = reportAvailability(pg);

describe.skipIf(!pgAvailable)(
  `Postgres: close while writing, order over a pool${pgAvailable ? '' : ` (skipped: ${pg.unavailable})`}`,
  () => {
    afterAll(() => pg.cleanup());

    it('close() with calls in flight while the server terminates the connections: every call settles, none hangs', async () => {
      const url = await pg.freshUrl();
      const admin = postgres(url, { max: 1, onnotice: () => {} });
      try {
        for (let round = 0; round < 10; round++) {
          const store = await openStore(url, { poolSize: 3 });
          const s = `s${round}`;
          await store.createSession(s, 'cli');
          // Every pooled connection is open before the kill, and none is killed while it starts up (that trips
          // postgres.js' dropped rejection of its type query: test/helpers/postgres-js.ts).
          await Promise.all(Array.from({ length: 6 }, () => store.getSession(s)));
          const appends = Array.from({ length: 30 }, (_, i) =>
            store.appendMessage(s, 'user', `round ${round} message ${i}`),
          );
          const others = [
            ...Array.from({ length: 10 }, (_, i) => store.createSession(`${s}-child-${i}`, 'cli')),
            ...Array.from({ length: 5 }, () => store.getMessages(s)),
            ...Array.from({ length: 5 }, () => store.sessionCount()),
          ];
          const outcomes = [...appends, ...others].map((p) =>
            p.then(
              () => 'resolved',
              (e: unknown) => e,
            ),
          );
          const closing = store.close();
          if (round % 2 === 1) await sleep(round); // kill at different points of the drain
          await admin`SELECT pg_terminate_backend(pid) FROM pg_stat_activity
          WHERE datname = current_database() AND application_name = 'hermes-sessiondb'
            AND ${admin.unsafe(PAST_STARTUP_SQL)}`;
          const deadline = sleep(20_000).then(() => 'hung');
          expect(await Promise.race([closing.then(() => 'closed'), deadline])).toBe('closed');
          expect(
            await Promise.race([Promise.all(outcomes).then(() => 'settled'), sleep(0).then(() => 'pending')]),
          ).toBe('settled');
          // A call fails only as a typed error: the lost connection (DatabaseError) or the closed store.
          for (const outcome of await Promise.all(outcomes)) {
            if (outcome !== 'resolved')
              expect(outcome instanceof DatabaseError || outcome instanceof StoreClosedError, String(outcome)).toBe(
                true,
              );
          }
          await store.close();

          // What resolved is there; an append that failed before COMMIT is not; counters equal rows.
          const check = await openStore(url);
          try {
            const rows = await check.getMessages(s);
            const stored = new Set(rows.map((m) => m.id));
            const contents = new Set(rows.map((m) => m.content));
            for (const [i, r] of (await Promise.allSettled(appends)).entries()) {
              if (r.status === 'fulfilled') expect(stored.has(r.value)).toBe(true);
              else if (r.reason instanceof StoreClosedError)
                expect(contents.has(`round ${round} message ${i}`)).toBe(false);
            }
            expect((await check.getSession(s))!.messageCount).toBe(rows.length);
          } finally {
            await check.close();
          }
        }
      } finally {
        await admin.end();
      }
    });

    it('16 un-awaited appends to one session keep their order over a pool of 10, with other sessions written beside them', async () => {
      const store = await openStore(await pg.freshUrl(), { poolSize: 10 });
      try {
        await store.createSession('ordered', 'cli');
        for (let w = 0; w < 8; w++) await store.createSession(`busy-${w}`, 'cli');
        const expected: string[] = [];
        for (let round = 0; round < 20; round++) {
          const noise = Array.from({ length: 8 }, (_, w) => store.appendMessage(`busy-${w}`, 'user', `noise ${round}`));
          const calls = Array.from({ length: 16 }, (_, i) => {
            expected.push(`round ${round} message ${i}`);
            return store.appendMessage('ordered', 'user', `round ${round} message ${i}`);
          });
          const ids = await Promise.all(calls);
          await Promise.all(noise);
          expect(ids).toEqual([...ids].sort((a, b) => a - b));
        }
        expect((await store.getMessages('ordered')).map((m) => m.content)).toEqual(expected);
      } finally {
        await store.close();
      }
    });
  },
);
