/**
 * Import, copy and verify to and from MySQL/MariaDB: the Python reference's own state.db through
 * MariaDB → Postgres → MariaDB → SQLite, each step verified, the last store compared with the first. The
 * 110,000-message import is test/mysql/import-scale.test.ts (npm run test:scale).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { type SessionStore, copyStore, importHermesStateDb, openStore, verifyStores } from '../../src/index.js';
import { harnessAvailable } from '../../src/testing/index.js';
import { postgresHarness, reportAvailability, mariadbHarness } from '../backends.js';
import { sharedFixture } from '../helpers/fixtures.js';

const mariadb = await mariadbHarness();
const postgres = await postgresHarness();
const fixture = sharedFixture('hermes-v11-small.db');
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hsdb-mysql-transfer-'));

const ready = harnessAvailable(mariadb) && reportAvailability(postgres);
const why = [mariadb.unavailable, postgres.unavailable, fixture.missing].filter(Boolean).join('; ');

describe.skipIf(!ready || fixture.path === undefined)(
  `transfers through MariaDB${why ? ` (skipped: ${why})` : ''}`,
  () => {
    const opened: SessionStore[] = [];
    const keep = (store: SessionStore) => {
      opened.push(store);
      return store;
    };
    afterAll(async () => {
      for (const store of opened) await store.close();
      await mariadb.cleanup();
      await postgres.cleanup();
      fs.rmSync(dir, { recursive: true, force: true });
    });

    it('Hermes state.db → MariaDB → Postgres → MariaDB → SQLite, every step verified, the ends equal', async () => {
      const first = keep(await mariadb.open());
      const imported = await importHermesStateDb(fixture.path!, first, { verify: true });
      expect(imported.verification?.problems).toEqual([]);
      expect(imported.verification?.ok).toBe(true);
      // Phrases taken from the file's messages find them on MariaDB.
      expect(imported.verification?.spotChecks.length).toBeGreaterThan(0);
      expect(imported.verification?.spotChecks.every((c) => c.same)).toBe(true);
      expect(imported.verification?.spotChecksSkipped).toBeUndefined();
      expect(imported.messages).toBeGreaterThan(100);

      const pg = keep(await postgres.open());
      const toPg = await copyStore(first, pg, { verify: true });
      expect(toPg.verification?.problems).toEqual([]);
      // Postgres can search: the phrases taken from MariaDB's messages find them there.
      expect(toPg.verification?.spotChecks.length).toBeGreaterThan(0);
      expect(toPg.verification?.spotChecks.every((c) => c.same)).toBe(true);

      const second = keep(await mariadb.open());
      expect((await copyStore(pg, second, { verify: true })).verification?.problems).toEqual([]);
      const last = keep(await openStore(`sqlite:${path.join(dir, 'last.db')}`));
      expect((await copyStore(second, last, { verify: true })).verification?.problems).toEqual([]);

      const ends = await verifyStores(first, last);
      expect(ends.problems).toEqual([]);
      expect(ends.ok).toBe(true);
      // And a conversation reads the same at both ends.
      const [busiest] = await first.listSessionsRich({ includeChildren: true, limit: 1 });
      expect(await last.getMessagesAsConversation(busiest!.id)).toEqual(
        await first.getMessagesAsConversation(busiest!.id),
      );
    });
  },
);
