/**
 * A database whose defaults differ from the server's usual ones (ALTER DATABASE … SET) must not change what
 * the store writes or reads: every connection sets the session parameters the code depends on. Each database
 * here gets hostile defaults before the store first opens it; then it is migrated, written (times to the
 * microsecond, costs to the last bit), read back exactly and searched.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import postgres from 'postgres';
import { afterAll, describe, expect, it } from 'vitest';
import { type SearchSort, type SessionStore, openStore } from '../../src/index.js';
import { DATABASE_URL, postgresHarness, reportAvailability } from '../backends.js';

/**
 * Hostile defaults. Without the per-connection settings the first four break the store (measured one at a
 * time): times fail to parse, costs lose digits, LIKE … ESCAPE '\' is a syntax error, and concurrent appends
 * to one session fail with serialization errors (on a server). The store sets the others too, so they are
 * here to show that its values win for them as well.
 */
const HOSTILE: Record<string, string> = {
  DateStyle: `'SQL, DMY'`, // timestamptz text becomes "01/11/2026 00:00:00.123457 UTC"
  extra_float_digits: '-3', // float8 text: 0.333333333333
  standard_conforming_strings: 'off', // '\' opens an escape
  default_transaction_isolation: `'repeatable read'`,
  TimeZone: `'Pacific/Chatham'`, // +13:45
  IntervalStyle: `'sql_standard'`,
  bytea_output: `'escape'`,
  gin_fuzzy_search_limit: '1', // a GIN scan returns a random subset of its matches
};
const hostileDefaults = (target: string) =>
  Object.entries(HOSTILE).map(([name, value]) => `ALTER ${target} SET ${name} = ${value}`);

/** A clock handing out times with all six microsecond digits, remembering the last one. */
function testClock() {
  let tick = 0;
  const clock = Object.assign(
    () => (clock.last = Math.round((1_793_491_200.123457 + tick++ * 3_600.000_011) * 1e6) / 1e6),
    {
      last: 0,
    },
  );
  return clock;
}

const COSTS = { estimatedCostUsd: 1 / 3, actualCostUsd: 0.1 + 0.2 };

async function exercise(
  store: SessionStore,
  clock: ReturnType<typeof testClock>,
  concurrentWriters: boolean,
): Promise<void> {
  await store.createSession('sess-alpha', 'cli', { model: 'gpt-5' });
  const started = clock.last;
  await store.createSession('sess-beta', 'telegram');
  await store.updateTokenCounts('sess-alpha', { inputTokens: 1234, outputTokens: 56, ...COSTS, apiCallCount: 2 });
  const written: number[] = [];
  await store.appendMessage('sess-alpha', 'user', 'deploy the ingress 100% now_please');
  written.push(clock.last);
  await store.appendMessage('sess-alpha', 'assistant', [{ type: 'text', text: 'rolled back the deploy' }]);
  written.push(clock.last);
  await store.appendMessage('sess-alpha', 'user', '记忆断裂 中文检索');
  written.push(clock.last);
  await store.appendMessage('sess-beta', 'user', 'deploy later');
  const betaActive = clock.last;
  await store.setSessionTitle('sess-alpha', 'Deploy_100%');
  await store.endSession('sess-beta', 'done');
  const ended = clock.last;

  const alpha = (await store.getSession('sess-alpha'))!;
  expect(alpha.startedAt).toBe(started);
  expect(alpha.estimatedCostUsd).toBe(COSTS.estimatedCostUsd);
  expect(alpha.actualCostUsd).toBe(COSTS.actualCostUsd);
  expect([alpha.inputTokens, alpha.outputTokens, alpha.apiCallCount, alpha.messageCount]).toEqual([1234, 56, 2, 3]);
  expect((await store.getSession('sess-beta'))!.endedAt).toBe(ended);
  expect((await store.getMessages('sess-alpha')).map((m) => m.timestamp)).toEqual(written);
  const rich = await store.listSessionsRich({ orderByLastActive: true });
  expect(rich.map((s) => [s.id, s.lastActive])).toEqual([
    ['sess-beta', betaActive],
    ['sess-alpha', written[2]],
  ]);

  // LIKE with ESCAPE '\' (prefixes, title lineage) and every search path.
  expect(await store.resolveSessionId('sess-al')).toBe('sess-alpha');
  expect(await store.getNextTitleInLineage('Deploy_100%')).toBe('Deploy_100% #2');
  const ids = async (query: string, sort?: SearchSort) =>
    (await store.searchMessages(query, { sort })).map((h) => h.sessionId);
  expect(await ids('deploy')).toHaveLength(3);
  expect(await ids('deploy', 'newest')).toEqual(['sess-beta', 'sess-alpha', 'sess-alpha']);
  expect(await ids('deploy', 'oldest')).toEqual(['sess-alpha', 'sess-alpha', 'sess-beta']);
  expect(await ids('"rolled back"')).toEqual(['sess-alpha']);
  expect(await ids('中文检索')).toEqual(['sess-alpha']);
  expect(await ids('记忆')).toEqual(['sess-alpha']);
  expect((await store.searchSessions()).map((s) => s.id)).toEqual(['sess-beta', 'sess-alpha']);
  const exported = (await store.exportSession('sess-alpha'))!;
  expect(exported.messages.map((m) => m.timestamp)).toEqual(written);
  expect(await store.pruneSessions({ olderThanDays: 0 })).toBe(1);

  if (concurrentWriters) {
    // Under READ COMMITTED concurrent appends wait for each other's counter update; under REPEATABLE READ
    // all but one fail with a serialization error.
    await Promise.all(Array.from({ length: 8 }, (_, i) => store.appendMessage('sess-alpha', 'user', `burst ${i}`)));
    expect((await store.getSession('sess-alpha'))!.messageCount).toBe(11);
  }
}

const harness = await postgresHarness();
const postgresAvailable = reportAvailability(harness);
afterAll(() => harness.cleanup());

describe.skipIf(!postgresAvailable)(
  `hostile database defaults [postgres]${postgresAvailable ? '' : ` (skipped: ${harness.unavailable})`}`,
  () => {
    it('every pooled connection overrides them: migrate, write, read back exactly, search, concurrent appends', async () => {
      const url = await harness.freshUrl();
      const database = new URL(url).pathname.slice(1);
      const admin = postgres(DATABASE_URL, { max: 1, onnotice: () => {} });
      try {
        for (const statement of hostileDefaults(`DATABASE "${database}"`)) await admin.unsafe(statement);
      } finally {
        await admin.end();
      }
      // The defaults are in force for a plain connection.
      const plain = postgres(url, { max: 1, onnotice: () => {} });
      try {
        const [row] =
          await plain`SELECT current_setting('DateStyle') AS ds, current_setting('extra_float_digits') AS efd`;
        expect(row).toEqual({ ds: 'SQL, DMY', efd: '-3' });
      } finally {
        await plain.end();
      }
      const clock = testClock();
      const store = await openStore(url, { poolSize: 4, clock });
      try {
        await exercise(store, clock, true);
      } finally {
        await store.close();
      }
    });
  },
);

describe('hostile database defaults [pglite]', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hsdb-pglite-settings-'));
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  // PGlite ignores ALTER DATABASE/ROLE … SET (checked: a reopened instance keeps the built-in values) but
  // reads the data directory's postgresql.auto.conf, which ALTER SYSTEM writes.
  it('the connection overrides them (ALTER SYSTEM): migrate, write, read back exactly, search', async () => {
    const dataDir = path.join(dir, 'pgdata');
    const raw = new PGlite(dataDir);
    try {
      for (const statement of hostileDefaults('SYSTEM')) await raw.exec(statement);
    } finally {
      await raw.close();
    }
    const reopened = new PGlite(dataDir);
    try {
      const { rows } = await reopened.query<{ ds: string }>(`SELECT current_setting('DateStyle') AS ds`);
      expect(rows[0]!.ds).toBe('SQL, DMY');
    } finally {
      await reopened.close();
    }
    const clock = testClock();
    const store = await openStore(`pglite:${dataDir}`, { clock });
    try {
      await exercise(store, clock, false);
    } finally {
      await store.close();
    }
  });
});
