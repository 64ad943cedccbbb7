/**
 * A Hermes-format history of 110,000 messages imported into MariaDB and verified (the same history the listing
 * oracle reads, written once per run: test/helpers/corpus-cache.ts). The small-file transfers through MariaDB
 * are test/mysql/transfer.test.ts.
 */
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { type SessionStore, importHermesStateDb } from '../../src/index.js';
import { harnessAvailable } from '../../src/testing/index.js';
import { isCI, mariadbHarness } from '../backends.js';
import { LISTING_HISTORY, sharedHermesHistory } from '../helpers/corpus-cache.js';

const mariadb = await mariadbHarness();
const ready = harnessAvailable(mariadb);

describe.skipIf(!ready)(
  `a 110,000-message import into MariaDB${ready ? '' : ` (skipped: ${mariadb.unavailable})`}`,
  () => {
    let store: SessionStore | undefined;
    afterAll(async () => {
      await store?.close();
      await mariadb.cleanup();
    });

    it(
      'imports a 110,000-message Hermes history into MariaDB and verifies it',
      async () => {
        const file = await sharedHermesHistory(LISTING_HISTORY);
        store = await mariadb.open();
        const hermes = new Database(file, { readonly: true });
        const inFile = (hermes.prepare('SELECT COUNT(*) AS n FROM messages').get() as { n: number }).n;
        hermes.close();
        expect(inFile).toBeGreaterThanOrEqual(110_000);
        const report = await importHermesStateDb(file, store, { verify: true });
        expect(report.messages).toBe(inFile);
        expect(report.verification?.problems).toEqual([]);
        expect(report.verification?.ok).toBe(true);
        expect(await store.messageCount()).toBe(inFile);
      },
      isCI ? 600_000 : 300_000,
    );
  },
);
