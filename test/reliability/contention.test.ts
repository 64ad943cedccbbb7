/**
 * Contention: 8 processes write one SQLite file (appends to their own session and a shared one, title
 * sets, token updates) while 2 processes search and list. No SQLITE_BUSY (or any error) escapes, no row is
 * lost or duplicated, counters equal rows; p99 write latency is reported. Postgres: 32 concurrent writers
 * over a pool of 10 connections in one process.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { openStore } from '../../src/index.js';
import { type ContractHarness, harnessAvailable } from '../../src/testing/index.js';
import { postgresHarness, sqliteFileHarness, mariadbHarness } from '../backends.js';
import { spawnTs, waitForLine } from '../helpers/processes.js';

const WRITERS = 8;
const ROUNDS = 150;

const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
};

describe('SQLite: 8 writer processes and 2 reader processes on one file', () => {
  const h = sqliteFileHarness();
  afterAll(() => h.cleanup());

  it('lets no error escape, loses and duplicates nothing, and keeps counters equal to rows', async () => {
    const url = await h.freshUrl();
    const setup = await openStore(url);
    await setup.createSession('shared', 'cli');
    for (let w = 0; w < WRITERS; w++) await setup.createSession(`writer-${w}`, 'cli');
    await setup.close();

    const writers = Array.from({ length: WRITERS }, (_, w) =>
      spawnTs('../reliability/workers/mixed-writer.ts', [url, String(w), String(ROUNDS)]),
    );
    const readers = Array.from({ length: 2 }, () => spawnTs('../reliability/workers/reader.ts', [url]));
    await Promise.all([...writers, ...readers].map((c) => waitForLine(c, (l) => l === 'ready')));
    const written = writers.map((c) => waitForLine(c, (l) => l.startsWith('{')));
    const read = readers.map((c) => waitForLine(c, (l) => l.startsWith('{')));
    for (const c of [...writers, ...readers]) c.stdin.write('go\n');
    const results = (await Promise.all(written)).map(
      (l) => JSON.parse(l) as { ids: number[]; latencies: number[]; errors: string[] },
    );
    for (const c of readers) c.stdin.write('stop\n');
    const reads = (await Promise.all(read)).map((l) => JSON.parse(l) as { reads: number; errors: string[] });

    expect(results.flatMap((r) => r.errors)).toEqual([]);
    expect(reads.flatMap((r) => r.errors)).toEqual([]);
    expect(reads.every((r) => r.reads > 0)).toBe(true);
    const latencies = results.flatMap((r) => r.latencies);
    console.log(
      `[sqlite contention] ${latencies.length} writes by ${WRITERS} processes, ${reads.reduce((n, r) => n + r.reads, 0)} reads by 2: ` +
        `write latency p50 ${percentile(latencies, 50).toFixed(1)} ms, p99 ${percentile(latencies, 99).toFixed(1)} ms, max ${Math.max(...latencies).toFixed(1)} ms`,
    );

    const store = await openStore(url);
    try {
      const ids = results.flatMap((r) => r.ids).sort((a, b) => a - b);
      expect(new Set(ids).size).toBe(ids.length);
      expect(ids).toHaveLength(WRITERS * ROUNDS * 2);
      const shared = await store.getMessages('shared');
      expect(shared).toHaveLength(WRITERS * ROUNDS);
      expect((await store.getSession('shared'))!.messageCount).toBe(WRITERS * ROUNDS);
      for (let w = 0; w < WRITERS; w++) {
        const s = (await store.getSession(`writer-${w}`))!;
        expect(s.messageCount).toBe(ROUNDS);
        expect(s.inputTokens).toBe(10 * Math.ceil(ROUNDS / 5));
        expect(s.title).toBe(`Writer ${w} round ${Math.floor((ROUNDS - 1) / 10) * 10}`);
      }
      const all = [
        ...shared,
        ...(await Promise.all(Array.from({ length: WRITERS }, (_, w) => store.getMessages(`writer-${w}`)))).flat(),
      ];
      expect(all.map((m) => m.id).sort((a, b) => a - b)).toEqual(ids);
    } finally {
      await store.close();
    }
  }, 300_000);
});

// The servers: many callers over a small pool, two sessions' rows locked by everyone (MariaDB: InnoDB row
// locks under READ COMMITTED, deadlock victims run again).
const servers: Array<{ label: string; h: ContractHarness }> = [
  { label: 'Postgres', h: await postgresHarness() },
  { label: 'MariaDB', h: await mariadbHarness() },
];
for (const { label, h: pg } of servers) {
  const pgAvailable = harnessAvailable(pg);
  describe.skipIf(!pgAvailable)(
    `${label}: 32 concurrent writers over a pool of 10${pgAvailable ? '' : ` (skipped: ${pg.unavailable})`}`,
    () => {
      afterAll(() => pg.cleanup());

      it('lets no error escape, loses and duplicates nothing, and keeps counters equal to rows', async () => {
        const store = await openStore(await pg.freshUrl(), { poolSize: 10 });
        try {
          await store.createSession('shared', 'cli');
          for (let w = 0; w < 32; w++) await store.createSession(`writer-${w}`, 'cli');
          const latencies: number[] = [];
          const timed = async <T>(write: () => Promise<T>) => {
            const started = performance.now();
            try {
              return await write();
            } finally {
              latencies.push(performance.now() - started);
            }
          };
          const ids = (
            await Promise.all(
              Array.from({ length: 32 }, async (_, w) => {
                const mine: number[] = [];
                for (let i = 0; i < 40; i++) {
                  mine.push(
                    await timed(() => store.appendMessage(`writer-${w}`, 'user', `pg writer ${w} message ${i}`)),
                  );
                  mine.push(await timed(() => store.appendMessage('shared', 'assistant', `pg shared ${w}/${i}`)));
                  if (i % 5 === 0) await timed(() => store.updateTokenCounts(`writer-${w}`, { inputTokens: 10 }));
                  if (i % 10 === 0)
                    await timed(() => store.setSessionTitle(`writer-${w}`, `PG writer ${w} round ${i}`));
                }
                return mine;
              }),
            )
          ).flat();
          console.log(
            `[${label} contention] ${latencies.length} writes by 32 callers over 10 connections: ` +
              `p50 ${percentile(latencies, 50).toFixed(1)} ms, p99 ${percentile(latencies, 99).toFixed(1)} ms`,
          );
          expect(new Set(ids).size).toBe(32 * 80);
          expect((await store.getSession('shared'))!.messageCount).toBe(32 * 40);
          expect(await store.messageCount()).toBe(32 * 80);
          for (let w = 0; w < 32; w++) {
            const s = (await store.getSession(`writer-${w}`))!;
            expect([s.messageCount, s.inputTokens, s.title]).toEqual([40, 80, `PG writer ${w} round 30`]);
          }
        } finally {
          await store.close();
        }
      }, 300_000);
    },
  );
}
