/**
 * The cost cap on broad queries, on every backend: relevance ranks only the newest `searchRankWindow`
 * matches; newest/oldest still reach every match; filters apply before the window is counted.
 */
import { afterAll, describe, expect, it } from 'vitest';
import {
  type Harness,
  pgliteHarness,
  postgresHarness,
  reportAvailability,
  sqliteFileHarness,
  sqliteMemoryHarness,
  mariadbHarness,
} from './backends.js';

const harnesses: Harness[] = [
  sqliteMemoryHarness(),
  sqliteFileHarness(),
  pgliteHarness(),
  await postgresHarness(),
  await mariadbHarness(),
];

for (const h of harnesses) {
  const available = reportAvailability(h);
  describe.skipIf(!available)(
    `search rank window [${h.name}]${available ? '' : ` (skipped: ${h.unavailable})`}`,
    () => {
      afterAll(() => h.cleanup());

      it('ranks the newest N matches, and sorted searches still see them all', async () => {
        const store = await h.open({ searchRankWindow: 3 });
        try {
          await store.createSession('a', 'cli');
          await store.createSession('b', 'telegram');
          const ids: number[] = [];
          for (let i = 0; i < 6; i++)
            ids.push(await store.appendMessage(i < 4 ? 'a' : 'b', 'user', `report ${'word '.repeat(i)}`));
          const relevance = (await store.searchMessages('report', { limit: -1 }))
            .map((m) => m.id)
            .sort((x, y) => x - y);
          expect(relevance).toEqual(ids.slice(3));
          expect(await store.searchMessages('report', { sort: 'newest', limit: -1 })).toHaveLength(6);
          // With a filter, the window counts the filtered matches: the old 'a' messages are still found.
          const onlyA = (await store.searchMessages('report', { sourceFilter: ['cli'], limit: -1 }))
            .map((m) => m.id)
            .sort((x, y) => x - y);
          expect(onlyA).toEqual(ids.slice(1, 4));
          // A phrase's window is counted on its words (the relaxed query): the newest 3 'report AND word'
          // messages are the last three, and all three are phrase matches.
          const phrase = (await store.searchMessages('"report word"', { limit: -1 }))
            .map((m) => m.id)
            .sort((x, y) => x - y);
          expect(phrase).toEqual(ids.slice(3));
          expect(await store.searchMessages('"report word"', { sort: 'oldest', limit: -1 })).toHaveLength(5);
        } finally {
          await store.close();
        }
      });
    },
  );
}
