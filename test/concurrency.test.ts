/**
 * Concurrency on real backends: several OS processes writing one SQLite file, and many connections to a
 * Postgres server racing for the same handoff. (PGlite is one connection in one process: nothing races.)
 */
import { afterAll, describe, expect, it } from 'vitest';
import { openStore } from '../src/index.js';
import { type Harness, postgresHarness, reportAvailability, sqliteFileHarness } from './backends.js';
import { spawnTs, waitForLine } from './helpers/processes.js';

async function race<T>(script: string, argsFor: (i: number) => string[], workers: number): Promise<T[]> {
  const children = Array.from({ length: workers }, (_, i) => spawnTs(script, argsFor(i)));
  await Promise.all(children.map((c) => waitForLine(c, (l) => l === 'ready')));
  const results = children.map((c) => waitForLine(c, (l) => l.startsWith('{')));
  for (const c of children) c.stdin.write('go\n');
  return (await Promise.all(results)).map((line) => JSON.parse(line) as T);
}

const shuffled = <T>(items: T[]) => [...items].sort(() => Math.random() - 0.5);

describe('SQLite: several processes on one file', () => {
  const h = sqliteFileHarness();
  afterAll(() => h.cleanup());

  it('keeps every row of 4 processes x 500 appends, with the counter equal to the rows', async () => {
    const url = await h.freshUrl();
    const setup = await openStore(url);
    await setup.createSession('shared', 'cli');
    await setup.close();
    const results = await race<{ ok: boolean; ids: number[]; error?: string }>(
      './append-worker.ts',
      (i) => [url, 'shared', '500', String(i)],
      4,
    );
    expect(results.map((r) => r.error ?? 'ok')).toEqual(['ok', 'ok', 'ok', 'ok']);
    const store = await openStore(url);
    try {
      const messages = await store.getMessages('shared');
      expect(messages).toHaveLength(2000);
      expect(new Set(messages.map((m) => m.content)).size).toBe(2000);
      const returned = results.flatMap((r) => r.ids).sort((a, b) => a - b);
      expect(returned).toEqual(messages.map((m) => m.id));
      expect((await store.getSession('shared'))!.messageCount).toBe(2000);
    } finally {
      await store.close();
    }
  }, 120_000);

  it('lets exactly one of 16 processes claim each of 50 pending handoffs', async () => {
    const url = await h.freshUrl();
    const setup = await openStore(url);
    const ids = Array.from({ length: 50 }, (_, i) => `handoff-${i}`);
    for (const id of ids) {
      await setup.createSession(id, 'cli');
      await setup.requestHandoff(id, 'telegram');
    }
    await setup.close();
    const results = await race<{ ok: boolean; won: string[]; error?: string }>(
      './claim-worker.ts',
      () => [url, shuffled(ids).join(',')],
      16,
    );
    expect(results.filter((r) => !r.ok)).toEqual([]);
    const wins = results.flatMap((r) => r.won).sort();
    expect(wins).toEqual([...ids].sort());
    const store = await openStore(url);
    try {
      for (const id of ids) expect((await store.getHandoffState(id))!.state).toBe('running');
    } finally {
      await store.close();
    }
  }, 120_000);
});

const pg: Harness = await postgresHarness();
const pgAvailable = reportAvailability(pg);
describe.skipIf(!pgAvailable)(`Postgres: many connections${pgAvailable ? '' : ` (skipped: ${pg.unavailable})`}`, () => {
  afterAll(() => pg.cleanup());

  it('lets exactly one of 16 concurrent claims win, 50 times over', async () => {
    const store = await pg.open({ poolSize: 16 });
    try {
      for (let round = 0; round < 50; round++) {
        const id = `race-${round}`;
        await store.createSession(id, 'cli');
        await store.requestHandoff(id, 'telegram');
        const outcomes = await Promise.all(Array.from({ length: 16 }, () => store.claimHandoff(id)));
        expect(outcomes.filter(Boolean)).toHaveLength(1);
      }
    } finally {
      await store.close();
    }
  }, 120_000);

  it('keeps every row of 16 concurrent appenders, with the counter equal to the rows', async () => {
    const store = await pg.open({ poolSize: 16 });
    try {
      await store.createSession('shared', 'cli');
      const ids = await Promise.all(
        Array.from({ length: 16 }, async (_, w) => {
          const mine: number[] = [];
          for (let i = 0; i < 50; i++) mine.push(await store.appendMessage('shared', 'user', `w${w}-${i}`));
          return mine;
        }),
      );
      expect(new Set(ids.flat()).size).toBe(800);
      expect(await store.messageCount({ sessionId: 'shared' })).toBe(800);
      expect((await store.getSession('shared'))!.messageCount).toBe(800);
    } finally {
      await store.close();
    }
  }, 120_000);
});
