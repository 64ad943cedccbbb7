/**
 * The two dialects describe the same data: same tables, same columns, same named indexes. Every deliberate
 * difference is listed here with its reason; anything else is drift between src/schema/sqlite.ts and pg.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import Database from 'better-sqlite3';
import { type SchemaInfo, openStore } from '../src/index.js';
import { DERIVED_SESSION_COLUMNS, HERMES_SESSION_COLUMNS } from '../src/schema/hermes-columns.js';
import { HERMES_V11_DDL } from './helpers/hermes-schema.js';

const ONLY_IN = {
  sqlite: {
    tables: { schema_version: 'Hermes reads its version row from the file; a Postgres store has no Python reader' },
    columns: {} as Record<string, string>,
    indexes: {} as Record<string, string>,
  },
  pg: {
    tables: {
      message_search_blocks:
        "each word's and trigram's postings in blocks; FTS5 keeps them in messages_fts_data and messages_fts_trigram_data",
      message_search_recent:
        'postings of messages not merged into blocks yet (FTS5 writes each message in its transaction)',
      message_search_removed: 'text of merged messages deleted or changed, until it leaves the blocks',
      message_search_merged: "the blocks' corpus totals per index; FTS5 keeps them in messages_fts_data",
    } as Record<string, string>,
    columns: {
      'messages.content_json': 'structured content as jsonb (Postgres text cannot hold the NUL of "\\x00json:")',
      'messages.search_cjk':
        'generated CJK characters and pairs for the short-CJK path (SQLite scans with LIKE, as Hermes does)',
    },
    indexes: {
      idx_messages_search_cjk: 'GIN over the CJK grams (SQLite has no index for short CJK, as in Hermes)',
      idx_message_search_recent_queued:
        'the messages waiting to be tokenized (FTS5 tokenizes in the writing transaction)',
    },
  },
};

describe('dialect parity', () => {
  let sqlite: SchemaInfo;
  let pg: SchemaInfo;

  beforeAll(async () => {
    const a = await openStore(':memory:');
    const b = await openStore('pglite:memory');
    [sqlite, pg] = [await a.introspect(), await b.introspect()];
    await a.close();
    await b.close();
  });
  afterAll(() => {});

  const columns = (info: SchemaInfo) =>
    Object.entries(info.tables).flatMap(([t, cols]) => cols.map((c) => `${t}.${c.name}`));
  const without = (names: string[], skip: Record<string, string>) => names.filter((n) => !(n in skip)).sort();

  it("names Hermes' sessions columns (schema/hermes-columns.ts) as Hermes' DDL and both migrated schemas have them", () => {
    const hermes = new Database(':memory:');
    hermes.exec(HERMES_V11_DDL);
    const hermesColumns = (hermes.pragma('table_info(sessions)') as Array<{ name: string }>).map((c) => c.name);
    hermes.close();
    expect(hermesColumns).toEqual([...HERMES_SESSION_COLUMNS]);
    for (const info of [sqlite, pg]) {
      expect(info.tables.sessions!.map((c) => c.name)).toEqual([...HERMES_SESSION_COLUMNS, ...DERIVED_SESSION_COLUMNS]);
    }
  });

  it('has the same tables', () => {
    expect(without(Object.keys(sqlite.tables), ONLY_IN.sqlite.tables)).toEqual(
      without(Object.keys(pg.tables), ONLY_IN.pg.tables),
    );
  });

  it('has the same columns in every shared table', () => {
    const shared = (info: SchemaInfo) =>
      columns(info).filter(
        (c) => !(c.split('.')[0]! in ONLY_IN.sqlite.tables) && !(c.split('.')[0]! in ONLY_IN.pg.tables),
      );
    expect(without(shared(sqlite), ONLY_IN.sqlite.columns)).toEqual(without(shared(pg), ONLY_IN.pg.columns));
  });

  it('has the same named indexes', () => {
    expect(
      without(
        sqlite.indexes.map((i) => i.name),
        ONLY_IN.sqlite.indexes,
      ),
    ).toEqual(
      without(
        pg.indexes.map((i) => i.name),
        ONLY_IN.pg.indexes,
      ),
    );
  });

  it('lists only differences that exist (the allow-list does not rot)', () => {
    for (const t of Object.keys(ONLY_IN.sqlite.tables)) expect(Object.keys(sqlite.tables)).toContain(t);
    for (const t of Object.keys(ONLY_IN.pg.tables)) expect(Object.keys(pg.tables)).toContain(t);
    for (const c of Object.keys(ONLY_IN.pg.columns)) expect(columns(pg)).toContain(c);
    for (const i of Object.keys(ONLY_IN.pg.indexes)) expect(pg.indexes.map((x) => x.name)).toContain(i);
  });
});
