/**
 * `store.search.matchesMessage(query, id)` (what import verification asks of each spot-checked message)
 * answers for that message alone: false for a message the query does not match, even when other messages
 * match it, in each search path (words, trigram substrings, short-CJK LIKE).
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
  sqliteFileHarness(),
  sqliteMemoryHarness(),
  pgliteHarness(),
  await postgresHarness(),
  await mariadbHarness(),
];

for (const h of harnesses) {
  const available = reportAvailability(h);
  describe.skipIf(!available)(
    `search.matchesMessage [${h.name}]${available ? '' : ` (skipped: ${h.unavailable})`}`,
    () => {
      afterAll(() => h.cleanup());

      it('is true for the messages a query matches and false for the others', async () => {
        const store = await h.open();
        try {
          await store.createSession('s', 'cli');
          const docker = await store.appendMessage('s', 'user', 'docker compose up');
          const cjk = await store.appendMessage('s', 'user', '数据库迁移完成');
          const other = await store.appendMessage('s', 'user', 'nothing relevant here');
          const cases: Array<[string, number, boolean]> = [
            ['docker', docker, true],
            ['docker', other, false],
            ['docker', cjk, false],
            ['"docker compose"', docker, true],
            ['"docker compose"', other, false],
            ['dock*', docker, true],
            ['dock*', other, false],
            ['数据库', cjk, true],
            ['数据库', docker, false],
            ['数据', cjk, true],
            ['数据', other, false],
          ];
          const answers = [];
          for (const [query, id] of cases) answers.push(await store.search.matchesMessage(query, id));
          expect(answers).toEqual(cases.map(([, , expected]) => expected));
        } finally {
          await store.close();
        }
      });
    },
  );
}
