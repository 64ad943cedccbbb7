/**
 * Contract: the schema a fresh store has, on any backend. Expectations come from Hermes' v11 DDL (quoted in
 * test/fixtures), not from our own schema files.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SchemaInfo, SessionStore } from '../../src/index.js';
import type { Harness } from '../backends.js';
import { HERMES_COLUMN_COUNTS, hermesV11Schema } from '../helpers/hermes-schema.js';

/** Tables Hermes has that one dialect deliberately lacks, with the reason. */
const DIALECT_ONLY_TABLES: Record<Harness['dialect'], Record<string, string>> = {
  sqlite: {},
  pg: { schema_version: 'the Hermes version marker only matters in a file the Python reference may open' },
  mysql: { schema_version: 'the Hermes version marker only matters in a file the Python reference may open' },
};

/** Hermes' partial indexes that one dialect builds whole, with the reason the rows they accept are the same. */
const WHOLE_INSTEAD_OF_PARTIAL: Record<Harness['dialect'], Record<string, string>> = {
  sqlite: {},
  pg: {},
  mysql: {
    idx_sessions_title_unique:
      'MySQL has no partial indexes; a UNIQUE index already admits any number of NULL titles (test/mysql/schema.test.ts)',
  },
};

export function schemaContract(h: Harness): void {
  describe('schema of a fresh store', () => {
    let store: SessionStore;
    let live: SchemaInfo;
    const hermes = hermesV11Schema();

    beforeAll(async () => {
      store = await h.open();
      live = await store.introspect();
    });
    afterAll(async () => {
      await store?.close();
    });

    it('reads the reference schema it compares against (the lens is not blind)', () => {
      expect(hermes.tables.sessions).toHaveLength(HERMES_COLUMN_COUNTS.sessions);
      expect(hermes.tables.messages).toHaveLength(HERMES_COLUMN_COUNTS.messages);
    });

    it('has every Hermes v11 table with every column', () => {
      const skipped = DIALECT_ONLY_TABLES[h.dialect];
      for (const [table, columns] of Object.entries(hermes.tables)) {
        if (table in skipped) continue;
        expect(live.tables[table], `table ${table}`).toBeDefined();
        const liveNames = live.tables[table]!.map((c) => c.name);
        for (const column of columns) expect(liveNames, `${table}.${column.name}`).toContain(column.name);
      }
    });

    it('keeps NOT NULL where Hermes has it', () => {
      for (const [table, columns] of Object.entries(hermes.tables)) {
        if (table in DIALECT_ONLY_TABLES[h.dialect]) continue;
        for (const column of columns.filter((c) => c.notNull)) {
          const mine = live.tables[table]?.find((c) => c.name === column.name);
          expect(mine?.notNull, `${table}.${column.name} NOT NULL`).toBe(true);
        }
      }
    });

    it('has every Hermes index on the same columns, plus the pending-handoff index', () => {
      const expected = [
        ...hermes.indexes,
        {
          name: 'idx_sessions_handoff_pending',
          table: 'sessions',
          unique: false,
          columns: ['handoff_state', 'started_at'],
          where: null,
        },
      ];
      for (const ix of expected) {
        const mine = live.indexes.find((i) => i.name === ix.name);
        expect(mine, `index ${ix.name}`).toBeDefined();
        expect({
          table: mine!.table,
          unique: mine!.unique,
          columns: mine!.columns,
          partial: mine!.where !== null,
        }).toEqual({
          table: ix.table,
          unique: ix.unique,
          columns: ix.columns,
          partial: ix.where !== null && !(ix.name in WHOLE_INSTEAD_OF_PARTIAL[h.dialect]),
        });
      }
    });

    it("has Hermes' foreign keys: no cascades except topic bindings dying with their session", () => {
      const fk = (table: string, column: string) =>
        live.foreignKeys.find((f) => f.table === table && f.columns.join() === column);
      expect(fk('messages', 'session_id')).toMatchObject({ referencedTable: 'sessions', onDelete: 'NO ACTION' });
      expect(fk('sessions', 'parent_session_id')).toMatchObject({ referencedTable: 'sessions', onDelete: 'NO ACTION' });
      expect(fk('telegram_dm_topic_bindings', 'session_id')).toMatchObject({
        referencedTable: 'sessions',
        onDelete: 'CASCADE',
      });
      // And nothing else cascades.
      expect(live.foreignKeys.filter((f) => f.onDelete === 'CASCADE')).toHaveLength(1);
    });

    it('records every shipped migration and nothing else', async () => {
      const status = await store.migrationStatus();
      expect(status.pending).toEqual([]);
      expect(status.unknownHashes).toEqual([]);
      expect(status.applied.length).toBeGreaterThan(0);
    });
  });
}
