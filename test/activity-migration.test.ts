/**
 * Migrations sqlite 0004/0005 and pg 0008/0009 (sessions.last_message_at and chain_last_active, kept by triggers)
 * on a populated store of the previous version: every row and message is the same afterwards, and the backfilled
 * values give the same listing order as Hermes' recursive CTE gave before (the store computes it that way while
 * the columns are missing).
 */
import fs from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import type { SessionStore } from '../src/index.js';
import { type Harness, pgliteHarness, postgresHarness, reportAvailability, sqliteFileHarness } from './backends.js';
import { folderUpTo } from './helpers/migration-folders.js';

const PREVIOUS = { sqlite: '0003_messages_timestamp_index', pg: '0007_pin_trigger_search_path' } as const;

/** Chains, branches, delegates, sessions without messages, and an old root resumed last, a second apart. */
async function fill(store: SessionStore, tick: () => void): Promise<void> {
  for (let k = 0; k < 12; k++) {
    const root = `root-${k}`;
    await store.createSession(root, k % 3 === 0 ? 'telegram' : 'cli');
    tick();
    if (k % 4 !== 3) await store.appendMessage(root, 'user', `question ${k}`);
    tick();
    let parent = root;
    for (let hop = 0; hop < k % 4; hop++) {
      await store.endSession(parent, 'compression');
      tick();
      const next = `${root}-c${hop}`;
      await store.createSession(next, 'cli', { parentSessionId: parent });
      tick();
      await store.appendMessages(next, [
        { role: 'user', content: `more ${hop}` },
        { role: 'assistant', content: 'ok' },
      ]);
      tick();
      parent = next;
    }
    if (k % 5 === 0) {
      await store.createSession(`${root}-delegate`, 'tool', { parentSessionId: root });
      await store.appendMessage(`${root}-delegate`, 'assistant', 'sub-task');
      tick();
    }
    if (k % 6 === 1) {
      await store.endSession(parent, 'branched');
      tick();
      await store.createSession(`${root}-branch`, 'cli', { parentSessionId: parent });
      tick();
    }
  }
  await store.appendMessage('root-0', 'user', 'back to the oldest');
}

const listings = async (store: SessionStore) => ({
  all: (await store.listSessionsRich({ includeChildren: true, orderByLastActive: true, limit: -1 })).map((r) => [
    r.id,
    r.lastActive,
  ]),
  roots: (await store.listSessionsRich({ orderByLastActive: true, limit: -1 })).map((r) => [
    r.id,
    r.lineageRootId ?? null,
    r.lastActive,
    r.preview,
  ]),
  byStart: (await store.listSessionsRich({ limit: -1 })).map((r) => [r.id, r.lineageRootId ?? null, r.lastActive]),
});

const harnesses: Array<Harness & { dialect: keyof typeof PREVIOUS }> = [
  sqliteFileHarness() as Harness & { dialect: 'sqlite' },
  pgliteHarness() as Harness & { dialect: 'pg' },
  (await postgresHarness()) as Harness & { dialect: 'pg' },
];
const tmpDirs: string[] = [];
afterAll(() => {
  for (const d of tmpDirs) fs.rmSync(d, { recursive: true, force: true });
});

for (const h of harnesses) {
  const available = reportAvailability(h);
  describe.skipIf(!available)(`session activity migration [${h.name}]`, () => {
    afterAll(() => h.cleanup());

    it('keeps every row and backfills the values Hermes computes', async () => {
      const url = await h.freshUrl();
      const previous = folderUpTo(h.dialect, PREVIOUS[h.dialect]);
      tmpDirs.push(previous);
      let now = 1_790_000_000.25;
      const clock = () => now;
      const tick = () => {
        now += 1.5;
      };
      const old = await h.openAt(url, { migrationsFolder: previous, clock });
      let exported: unknown;
      let before: Awaited<ReturnType<typeof listings>>;
      try {
        await fill(old, tick);
        exported = await old.exportAll();
        before = await listings(old);
      } finally {
        await old.close();
      }
      expect(before.all.length).toBeGreaterThan(30);

      const store = await h.openAt(url, { clock });
      try {
        expect((await store.migrationStatus()).pending).toEqual([]);
        expect(await store.exportAll()).toEqual(exported);
        expect(await listings(store)).toEqual(before);
        // And the triggers took over: a write after the migration moves its chain to the top.
        now += 100;
        await store.appendMessage('root-3-c2', 'user', 'after the upgrade');
        const [top] = await store.listSessionsRich({ orderByLastActive: true, limit: 1 });
        expect(top).toMatchObject({ id: 'root-3-c2', lineageRootId: 'root-3', lastActive: now });
      } finally {
        await store.close();
      }
      // Two migrator runs on a fresh database and a populated store: past 30 s on a loaded 2-core machine.
    }, 120_000);
  });
}
