/**
 * SQLite files are Hermes v11 state.db files: same columns, types and defaults as the Python reference, a
 * schema_version row of 11, and Hermes' open sequence changes nothing in a file we created. Runs on both
 * SQLite harnesses.
 */
import fs from 'node:fs';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { MigrationError, type SqliteBackend, openStore } from '../../src/index.js';
import { introspectSqlite } from '../../src/db/sqlite/introspect.js';
import { sqliteFileHarness, sqliteMemoryHarness } from '../backends.js';
import { copyFixture, sha256, sharedFixture } from '../helpers/fixtures.js';
import { HERMES_FTS_TABLES, HERMES_FTS_TRIGGERS, HERMES_V11_DDL, hermesV11Schema } from '../helpers/hermes-schema.js';

const sqliteBackend = (b: unknown) => b as SqliteBackend;
/** Ours beyond Hermes v11: the listing's trigger-kept activity columns (migrations 0004/0005). */
const ACTIVITY_COLUMNS = ['last_message_at', 'chain_last_active'];
const ACTIVITY_TRIGGERS = [
  'session_activity_message_insert',
  'session_activity_message_insert_early',
  'session_activity_message_delete',
  'session_activity_message_move',
  'session_activity_session_insert',
  'session_activity_session_update',
  'session_activity_session_delete',
];

for (const h of [sqliteFileHarness(), sqliteMemoryHarness()]) {
  describe(`Hermes v11 file format [${h.name}]`, () => {
    afterAll(() => h.cleanup());

    it('declares every column exactly as Hermes does (type, default, NOT NULL)', async () => {
      const store = await h.open();
      try {
        const ours = await store.introspect();
        const hermes = hermesV11Schema();
        for (const [table, columns] of Object.entries(hermes.tables)) {
          const derived = table === 'sessions' ? ACTIVITY_COLUMNS : [];
          // Ours has the derived activity columns at the end of sessions (ADD COLUMN), nullable REAL without a
          // default: Hermes' INSERTs and SELECT * work as before.
          expect(ours.tables[table]!.slice(columns.length)).toEqual(
            derived.map((name) => expect.objectContaining({ name, type: 'real', defaultValue: null, notNull: false })),
          );
          const mine = ours.tables[table]!.slice(0, columns.length).map(
            ({ name, type, defaultValue, notNull, primaryKey }) => ({
              name,
              type,
              defaultValue,
              // drizzle-kit writes NOT NULL on text primary keys, which Hermes leaves nullable (an SQLite quirk);
              // stricter, and invisible to Hermes, which only ever inserts ids.
              notNull: primaryKey ? false : notNull,
            }),
          );
          const theirs = columns.map(({ name, type, defaultValue, notNull, primaryKey }) => ({
            name,
            type,
            defaultValue,
            notNull: primaryKey ? false : notNull,
          }));
          expect(mine, table).toEqual(theirs);
        }
      } finally {
        await store.close();
      }
    });

    it('marks the file as schema version 11 and carries both FTS5 tables, the six FTS triggers and our activity triggers', async () => {
      const store = await h.open();
      try {
        const { client } = sqliteBackend(store.backend);
        expect(client.prepare('SELECT version FROM schema_version').pluck().all()).toEqual([11]);
        const schema = await store.introspect();
        expect(schema.virtualTables.map((v) => v.name).sort()).toEqual([...HERMES_FTS_TABLES].sort());
        expect(schema.virtualTables.find((v) => v.name === 'messages_fts_trigram')?.using).toMatch(
          /tokenize='trigram'/,
        );
        expect(schema.triggers.map((t) => t.name).sort()).toEqual(
          [...HERMES_FTS_TRIGGERS, ...ACTIVITY_TRIGGERS].sort(),
        );
      } finally {
        await store.close();
      }
    });

    it("survives Hermes' own open sequence unchanged (SCHEMA_SQL, title index, FTS probes)", async () => {
      const store = await h.open();
      try {
        const { client } = sqliteBackend(store.backend);
        const snapshot = () => client.prepare('SELECT type, name, sql FROM sqlite_master ORDER BY name').all();
        const before = snapshot();
        // What hermes_state.py runs on every open of a v11 file (spec §2.1): all IF NOT EXISTS, then probes.
        client.exec(HERMES_V11_DDL);
        expect(client.prepare('SELECT version FROM schema_version LIMIT 1').pluck().get()).toBe(11);
        expect(() => client.prepare('SELECT * FROM messages_fts LIMIT 0').all()).not.toThrow();
        expect(() => client.prepare('SELECT * FROM messages_fts_trigram LIMIT 0').all()).not.toThrow();
        expect(snapshot()).toEqual(before);
      } finally {
        await store.close();
      }
    });

    it('keeps the FTS indexes in step with inserts, updates and deletes', async () => {
      const store = await h.open();
      try {
        const { client } = sqliteBackend(store.backend);
        client.prepare("INSERT INTO sessions (id, source, started_at) VALUES ('s1', 'cli', 1)").run();
        const id = client
          .prepare(
            "INSERT INTO messages (session_id, role, content, tool_name, tool_calls, timestamp) VALUES ('s1', 'assistant', 'deploy with docker', 'web_search', '[{\"function\": {\"name\": \"UNIQUEFUNC\"}}]', 2)",
          )
          .run().lastInsertRowid;
        const word = (q: string) =>
          client.prepare('SELECT rowid FROM messages_fts WHERE messages_fts MATCH ?').pluck().all(q);
        const tri = (q: string) =>
          client.prepare('SELECT rowid FROM messages_fts_trigram WHERE messages_fts_trigram MATCH ?').pluck().all(q);
        expect(word('docker')).toEqual([id]);
        expect(word('web_search')).toEqual([id]);
        expect(word('UNIQUEFUNC')).toEqual([id]);
        expect(tri('"ocke"')).toEqual([id]);

        client.prepare("UPDATE messages SET content = 'now about kubernetes' WHERE id = ?").run(id);
        expect(word('docker')).toEqual([]);
        expect(word('kubernetes')).toEqual([id]);
        expect(tri('"ubernet"')).toEqual([id]);

        client.prepare('DELETE FROM messages WHERE id = ?').run(id);
        expect(word('kubernetes')).toEqual([]);
        expect(tri('"ubernet"')).toEqual([]);
        expect(
          client.prepare("INSERT INTO messages_fts(messages_fts) VALUES ('integrity-check')").run().changes,
        ).toBeGreaterThanOrEqual(0);
      } finally {
        await store.close();
      }
    });

    it('enforces foreign keys on every connection it opens', async () => {
      const store = await h.open();
      try {
        const { client } = sqliteBackend(store.backend);
        expect(client.pragma('foreign_keys', { simple: true })).toBe(1);
        expect(() =>
          client.prepare("INSERT INTO messages (session_id, role, timestamp) VALUES ('nope', 'user', 1)").run(),
        ).toThrow(/FOREIGN KEY/);
      } finally {
        await store.close();
      }
    });
  });
}

describe('opening a Hermes state.db written by the Python reference', () => {
  const fixture = sharedFixture('hermes-v11-small.db');

  it.skipIf(fixture.missing !== undefined)(
    `reads it as it is ({ readonly: true } writes nothing), and its schema is ours${fixture.missing ? ` (skipped: ${fixture.missing})` : ''}`,
    async () => {
      const copy = copyFixture(fixture.path!);
      const digest = sha256(copy);
      const store = await openStore(`sqlite:${copy}`, { readonly: true });
      try {
        const theirs = await store.introspect();
        const ours = await (async () => {
          const fresh = await openStore(':memory:');
          try {
            return await fresh.introspect();
          } finally {
            await fresh.close();
          }
        })();
        for (const [table, columns] of Object.entries(ours.tables)) {
          expect(
            theirs.tables[table]?.map((c) => c.name),
            table,
          ).toEqual(columns.map((c) => c.name).filter((name) => !ACTIVITY_COLUMNS.includes(name)));
        }
        // Without the activity columns the listing computes the activity order as Hermes does.
        const listed = await store.listSessionsRich({ orderByLastActive: true, limit: -1 });
        expect(listed.length).toBeGreaterThan(0);
        const { client } = sqliteBackend(store.backend);
        expect(client.prepare('SELECT COUNT(*) FROM sessions').pluck().get()).toBe(60);
        expect(client.prepare('SELECT COUNT(*) FROM messages').pluck().get()).toBe(305);
      } finally {
        await store.close();
      }
      expect(sha256(copy)).toBe(digest);
    },
  );

  it.skipIf(fixture.missing !== undefined)(
    `opens it for use with { migrate: false }, switching it to WAL as Hermes itself does${fixture.missing ? ` (skipped: ${fixture.missing})` : ''}`,
    async () => {
      const store = await openStore(`sqlite:${copyFixture(fixture.path!)}`, { migrate: false });
      try {
        const backend = sqliteBackend(store.backend);
        expect(backend.journalMode).toBe('wal');
        expect(backend.client.prepare('SELECT COUNT(*) FROM messages').pluck().get()).toBe(305);
        expect((await store.migrationStatus()).applied).toEqual([]);
      } finally {
        await store.close();
      }
    },
  );

  it.skipIf(fixture.missing !== undefined)(
    `refuses to migrate it (it has no migration history) and leaves it untouched${fixture.missing ? ` (skipped: ${fixture.missing})` : ''}`,
    async () => {
      const copy = copyFixture(fixture.path!);
      const digest = sha256(copy);
      const error = await openStore(`sqlite:${copy}`).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(MigrationError);
      expect((error as MigrationError).reason).toBe('FOREIGN_DATABASE');
      expect((error as MigrationError).message).toMatch(/hermes-sessiondb import/);
      expect(sha256(copy)).toBe(digest);
      const raw = new Database(copy, { readonly: true });
      try {
        const histories =
          "SELECT COUNT(*) FROM sqlite_master WHERE name IN ('__hermes_sessiondb_migrations', '__drizzle_migrations')";
        expect(raw.prepare(histories).pluck().get()).toBe(0);
      } finally {
        raw.close();
      }
      fs.rmSync(copy);
    },
  );
});

describe('lens sanity', () => {
  it('introspects a Hermes-built database the same way twice', () => {
    const db = new Database(':memory:');
    db.exec(HERMES_V11_DDL);
    expect(introspectSqlite(db)).toEqual(introspectSqlite(db));
    db.close();
  });
});
