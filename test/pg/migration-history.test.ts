/**
 * Postgres specifics of our own migration history (the contract covers both dialects): where it lives, the
 * superseded hash of 0001 (its foreign keys no longer name "public"), Drizzle's schema left standing when
 * something else lives in it, and a database whose app owns a "sessions" table.
 */
import { describe, expect, it } from 'vitest';
import { MigrationError, type SessionStore, openStore } from '../../src/index.js';
import { pgHistoryLocation, pgLegacyHistoryLocation } from '../../src/db/pg/history.js';
import { type Harness, pgliteHarness, postgresHarness, reportAvailability } from '../backends.js';
import {
  HISTORY_TABLE,
  OLD_PG_TABLES_HASH,
  PG_HISTORY_SCHEMA,
  drizzleMigrate,
  folderHashes,
  historyRows,
  oldVersionFolder,
  pgSchemaExists,
  query,
} from '../helpers/history.js';
import { shippedFolder } from '../helpers/migration-folders.js';

describe('pgHistoryLocation', () => {
  it('puts the history in a schema of its own in the default layout, and next to the tables in a schema given', () => {
    const ours = { schema: PG_HISTORY_SCHEMA, table: HISTORY_TABLE };
    expect(pgHistoryLocation()).toEqual(ours);
    expect(pgHistoryLocation('public')).toEqual(ours);
    expect(pgHistoryLocation('hermes')).toEqual({ schema: 'hermes', table: HISTORY_TABLE });
  });

  it('knows a legacy history only in the default layout (0.1.0 had no other)', () => {
    expect(pgLegacyHistoryLocation()).toEqual({ schema: 'drizzle', table: '__drizzle_migrations' });
    expect(pgLegacyHistoryLocation('public')).toEqual(pgLegacyHistoryLocation());
    expect(pgLegacyHistoryLocation('hermes')).toBeUndefined();
  });
});

const harnesses: Harness[] = [pgliteHarness(), await postgresHarness()];

for (const h of harnesses) {
  const available = reportAvailability(h);
  describe.skipIf(!available)(
    `Postgres migration history [${h.name}]${available ? '' : ` (skipped: ${h.unavailable})`}`,
    () => {
      const shipped = folderHashes(shippedFolder('pg'));
      const total = shipped.length;

      async function bare(body: (store: SessionStore) => Promise<void>): Promise<string> {
        const url = await h.freshUrl();
        const store = await openStore(url, { migrate: false });
        try {
          await body(store);
        } finally {
          await store.close();
        }
        return url;
      }

      it("counts 0.1.0's hash of 0001 in our own table as that migration applied (drizzle-kit run with 0.1.0's folder)", async () => {
        await bare(async (store) => {
          await drizzleMigrate(store, {
            migrationsFolder: oldVersionFolder('pg'),
            migrationsTable: HISTORY_TABLE,
            migrationsSchema: PG_HISTORY_SCHEMA,
          });
          expect((await historyRows(store, 'ours'))!.map((r) => r.hash)).toContain(OLD_PG_TABLES_HASH);
          expect(await store.migrationStatus()).toMatchObject({ pending: [], unknownHashes: [] });
          expect(await store.migrate()).toEqual({ applied: [], alreadyApplied: total, total });
        });
      });

      it("drops Drizzle's emptied table but keeps its schema while something else lives in it", async () => {
        await bare(async (store) => {
          await drizzleMigrate(store, { migrationsFolder: oldVersionFolder('pg') });
          await query(store, 'CREATE TABLE "drizzle"."app_things" ("id" integer)');
          await store.migrate();
          expect(await historyRows(store, 'ours')).toEqual(shipped);
          expect(await historyRows(store, 'legacy')).toBeNull();
          expect(await pgSchemaExists(store, 'drizzle')).toBe(true);
          expect(await query(store, 'SELECT count(*)::int AS n FROM "drizzle"."app_things"')).toEqual([{ n: 0 }]);
        });
      });

      it('refuses a database whose app owns a "sessions" table, names the schema option, and writes nothing', async () => {
        const url = await bare(async (store) => {
          // The app migrated with drizzle-kit: its history is in Drizzle's table, its auth table is "sessions".
          await query(store, 'CREATE TABLE "sessions" ("token" text PRIMARY KEY)');
          await query(store, 'CREATE SCHEMA "drizzle"');
          await query(
            store,
            'CREATE TABLE "drizzle"."__drizzle_migrations" (id SERIAL PRIMARY KEY, hash text NOT NULL, created_at bigint)',
          );
          await query(store, 'INSERT INTO "drizzle"."__drizzle_migrations" ("hash", "created_at") VALUES (?, ?)', [
            'b'.repeat(64),
            1,
          ]);
        });
        const error = await openStore(url).catch((e: unknown) => e);
        expect(error).toBeInstanceOf(MigrationError);
        expect((error as MigrationError).reason).toBe('FOREIGN_DATABASE');
        expect((error as MigrationError).message).toMatch(/another Postgres schema \(openStore option \{ schema:/);
        const after = await openStore(url, { migrate: false });
        try {
          expect(await pgSchemaExists(after, PG_HISTORY_SCHEMA)).toBe(false);
          expect(await historyRows(after, 'legacy')).toEqual([{ hash: 'b'.repeat(64), createdAt: 1 }]);
        } finally {
          await after.close();
        }
      });
    },
  );
}
