/**
 * drizzle/mysql on the real MariaDB server: the migrations apply to a fresh database; the tables, columns
 * and named indexes are SQLite's (the third dialect of test/parity.test.ts); and the column types keep the
 * values as Hermes' SQLite file does: ids exact and case-sensitive with trailing spaces significant, 4-byte
 * characters, NUL in text, microsecond times, 64-bit counters. Every deliberate difference is listed with its reason.
 */
import type mysql from 'mysql2/promise';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type SchemaInfo, openStore } from '../../src/index.js';
import { epochSecondsToDatetime, timestamptzToEpochSeconds } from '../../src/codecs/time.js';
import { MYSQL_ID_BYTES, MYSQL_TITLE_BYTES } from '../../src/schema/mysql.js';
import { DERIVED_SESSION_COLUMNS, HERMES_SESSION_COLUMNS } from '../../src/schema/hermes-columns.js';
import { HISTORY_TABLE } from '../../src/db/migrations.js';
import { MYSQL_STEPS_TABLE, migrateMysql } from '../../src/db/mysql/migrate.js';
import { mysqlDatabases } from '../helpers/mariadb.js';
import { probeMysql } from '../backends.js';

const unavailable = await probeMysql();

const ONLY_IN_SQLITE_TABLES: Record<string, string> = {
  schema_version: 'Hermes reads its version row from the file; a MySQL store has no Python reader',
};
const ONLY_IN_MYSQL_TABLES: Record<string, string> = {
  message_search_blocks: "the search index's postings, a row per block of a term's (SQLite: FTS5's own tables)",
  message_search_recent: 'messages not merged into the blocks yet, tokenized or queued (SQLite: FTS5 keeps its own)',
  message_search_removed: "deleted or changed messages' old text, until it leaves the blocks (SQLite: FTS5's delete)",
  message_search_merged: "bm25's corpus totals of the blocks (SQLite: FTS5 keeps its own)",
  session_activity:
    "each session's kept last_message_at and chain_last_active: a MySQL trigger cannot update sessions, which fired it (SQLite: columns of sessions)",
};
const ONLY_IN_SQLITE_INDEXES: Record<string, string> = {
  'sessions.idx_sessions_chain_last_active': "the activity order; MySQL's is session_activity's (below)",
};
const ONLY_IN_MYSQL_INDEXES: Record<string, string> = {
  'message_search_recent.idx_message_search_recent_queued': 'the queued messages the next catch-up tokenizes',
  'session_activity.idx_session_activity_order': 'the activity order (SQLite: sessions.idx_sessions_chain_last_active)',
};

describe.skipIf(unavailable !== undefined)(
  `drizzle/mysql on MariaDB${unavailable ? ` (skipped: ${unavailable})` : ''}`,
  () => {
    const dbs = mysqlDatabases();
    let c: mysql.Connection;
    let sqlite: SchemaInfo;

    beforeAll(async () => {
      c = await dbs.fresh();
      await migrateMysql(c, { where: 'test' });
      const store = await openStore(':memory:');
      sqlite = await store.introspect();
      await store.close();
    }, 60_000);
    afterAll(() => dbs.cleanup());

    const rows = async <T>(text: string, params: unknown[] = []): Promise<T[]> =>
      (await c.query(text, params))[0] as T[];

    async function tables(): Promise<Record<string, string[]>> {
      const cols = await rows<{ t: string; c: string }>(
        `SELECT TABLE_NAME AS t, COLUMN_NAME AS c FROM information_schema.COLUMNS
       WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME NOT IN (?, ?) ORDER BY TABLE_NAME, ORDINAL_POSITION`,
        // The migrator's bookkeeping, as SQLite's introspection leaves out its history table.
        [HISTORY_TABLE, MYSQL_STEPS_TABLE],
      );
      const out: Record<string, string[]> = {};
      for (const { t, c: col } of cols) {
        out[t] ??= [];
        out[t].push(col);
      }
      return out;
    }

    it("has SQLite's tables and columns, and Hermes' sessions columns in Hermes' order", async () => {
      const mine = await tables();
      for (const t of Object.keys(ONLY_IN_MYSQL_TABLES)) {
        expect(mine).toHaveProperty(t);
        delete mine[t];
      }
      expect(mine.sessions).toEqual([...HERMES_SESSION_COLUMNS, ...DERIVED_SESSION_COLUMNS]);
      const theirs = Object.fromEntries(
        Object.entries(sqlite.tables)
          .filter(([t]) => !(t in ONLY_IN_SQLITE_TABLES))
          .map(([t, cols]) => [t, cols.map((col) => col.name)]),
      );
      expect(mine).toEqual(theirs);
      for (const t of Object.keys(ONLY_IN_SQLITE_TABLES)) expect(Object.keys(sqlite.tables)).toContain(t);
    });

    it("has SQLite's named indexes, unique where SQLite's are", async () => {
      const indexes = await rows<{ name: string; table_name: string; non_unique: number | string }>(
        `SELECT DISTINCT INDEX_NAME AS name, TABLE_NAME AS table_name, NON_UNIQUE AS non_unique
       FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = DATABASE() AND INDEX_NAME LIKE 'idx\\_%'`,
      );
      const names = indexes.map((i) => `${i.table_name}.${i.name}`);
      for (const i of Object.keys(ONLY_IN_MYSQL_INDEXES)) expect(names).toContain(i);
      const mine = indexes
        .filter((i) => !(`${i.table_name}.${i.name}` in ONLY_IN_MYSQL_INDEXES))
        .map((i) => `${i.table_name}.${i.name}${Number(i.non_unique) === 0 ? ' unique' : ''}`)
        .sort();
      const theirs = sqlite.indexes
        .filter((i) => i.name.startsWith('idx_') && !(`${i.table}.${i.name}` in ONLY_IN_SQLITE_INDEXES))
        .map((i) => `${i.table}.${i.name}${i.unique ? ' unique' : ''}`)
        .sort();
      expect(mine).toEqual(theirs);
      for (const i of Object.keys(ONLY_IN_SQLITE_INDEXES))
        expect(sqlite.indexes.map((x) => `${x.table}.${x.name}`)).toContain(i);
    });

    describe('values keep what SQLite keeps', () => {
      it('ids are exact: case, trailing spaces and 4-byte characters make different ids, read back as written', async () => {
        const ids = ['S1', 's1', 'a', 'a ', ' a', 'é', 'e\u0301', '😀', '日本語', 'x\u0000y'];
        for (const id of ids) {
          await c.query('INSERT INTO sessions (id, source, started_at) VALUES (?, ?, ?)', [
            id,
            'cli',
            '2026-11-01 00:00:00',
          ]);
        }
        const stored = await rows<{ id: Buffer }>('SELECT id FROM sessions ORDER BY id');
        // Byte order, as SQLite's BINARY collation sorts UTF-8 text.
        expect(stored.map((r) => r.id.toString('utf8'))).toEqual(
          [...ids].sort((x, y) => Buffer.compare(Buffer.from(x), Buffer.from(y))),
        );
        for (const id of ids) {
          const found = await rows<{ id: Buffer }>('SELECT id FROM sessions WHERE id = ?', [id]);
          expect(found.map((r) => r.id.toString('utf8'))).toEqual([id]);
        }
      });

      it('titles are unique byte for byte; any number of sessions have none', async () => {
        await c.query('DELETE FROM sessions');
        const titles = ['Plan', 'plan', 'plan ', '🚀 launch', null, null];
        for (const [i, title] of titles.entries()) {
          await c.query('INSERT INTO sessions (id, source, started_at, title) VALUES (?, ?, ?, ?)', [
            `t${i}`,
            'cli',
            '2026-11-01 00:00:00',
            title,
          ]);
        }
        await expect(
          c.query('INSERT INTO sessions (id, source, started_at, title) VALUES (?, ?, ?, ?)', [
            'dup',
            'cli',
            '2026-11-01 00:00:00',
            'plan ',
          ]),
        ).rejects.toMatchObject({ code: 'ER_DUP_ENTRY' });
        // The longest title (100 code points of 4 bytes) fits.
        await c.query('INSERT INTO sessions (id, source, started_at, title) VALUES (?, ?, ?, ?)', [
          'long',
          'cli',
          '2026-11-01 00:00:00',
          '😀'.repeat(MYSQL_TITLE_BYTES / 4),
        ]);
      });

      it('free text keeps NUL, emoji and 1 MB; times keep the microsecond; counters reach 2^53 - 1', async () => {
        await c.query('DELETE FROM sessions');
        const t = 1_793_491_200.123457;
        await c.query('INSERT INTO sessions (id, source, started_at, input_tokens) VALUES (?, ?, ?, ?)', [
          's',
          'cli',
          epochSecondsToDatetime(t),
          Number.MAX_SAFE_INTEGER,
        ]);
        const content = `\u0000json:{"a":"😀"} ${'x'.repeat(1024 * 1024)} \u0000 end`;
        await c.query('INSERT INTO messages (session_id, role, content, timestamp) VALUES (?, ?, ?, ?)', [
          's',
          'user',
          content,
          epochSecondsToDatetime(t + 0.000001),
        ]);
        const [session] = await rows<{ started_at: string; input_tokens: string }>(
          'SELECT started_at, input_tokens FROM sessions',
        );
        expect(timestamptzToEpochSeconds(session!.started_at)).toBe(t);
        expect(Number(session!.input_tokens)).toBe(Number.MAX_SAFE_INTEGER);
        const [message] = await rows<{ content: string; timestamp: string }>('SELECT content, timestamp FROM messages');
        expect(message!.content).toBe(content);
        expect(timestamptzToEpochSeconds(message!.timestamp)).toBe(1_793_491_200.123458);
      });

      it('bounds an id by bytes (an InnoDB key holds 3,072): 1,024 two-byte characters fit, 1,024 emoji do not', async () => {
        await c.query('DELETE FROM messages');
        await c.query('DELETE FROM sessions');
        const fits = 'é'.repeat(1024);
        expect(Buffer.byteLength(fits)).toBeLessThanOrEqual(MYSQL_ID_BYTES);
        await c.query('INSERT INTO sessions (id, source, started_at) VALUES (?, ?, ?)', [fits, 'cli', '2026-11-01']);
        await expect(
          c.query('INSERT INTO sessions (id, source, started_at) VALUES (?, ?, ?)', [
            '😀'.repeat(1024),
            'cli',
            '2026-11-01',
          ]),
        ).rejects.toMatchObject({ code: 'ER_DATA_TOO_LONG' });
      });
    });
  },
);
