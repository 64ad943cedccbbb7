/**
 * The checked-in migrations themselves: journal order (Drizzle 0.x skips a migration whose timestamp is not
 * newer than the last applied one), no unreviewed SQLite table rebuilds, and custom migrations in place.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { MigrationError } from '../src/index.js';
import { SUPERSEDED_HASHES, readMigrations } from '../src/db/migrations.js';
import { OLD_PG_TABLES_HASH } from './helpers/history.js';
import { folderWith, readJournal, shippedFolder } from './helpers/migration-folders.js';

/** SQLite migrations allowed to DROP TABLE, each with the test that proves it loses nothing. None yet. */
const REVIEWED_SQLITE_REBUILDS: Record<string, string> = {};

describe.each(['sqlite', 'pg'] as const)('shipped migrations [%s]', (dialect) => {
  const folder = shippedFolder(dialect);
  const journal = readJournal(folder);

  it('has strictly increasing journal timestamps', () => {
    const whens = journal.entries.map((e) => e.when);
    for (let i = 1; i < whens.length; i++) expect(whens[i]!).toBeGreaterThan(whens[i - 1]!);
  });

  it('has a file for every journal entry and no stray SQL files', () => {
    const files = fs
      .readdirSync(folder)
      .filter((f) => f.endsWith('.sql'))
      .sort();
    expect(files).toEqual(journal.entries.map((e) => `${e.tag}.sql`).sort());
  });

  it('reads every migration with statements in it', () => {
    const migrations = readMigrations(folder);
    expect(migrations.map((m) => m.tag)).toEqual(journal.entries.map((e) => e.tag));
    for (const m of migrations) expect(m.statements.length, m.tag).toBeGreaterThan(0);
  });

  it('names no schema: the tables go wherever the store is put', () => {
    for (const e of journal.entries) {
      const text = fs.readFileSync(path.join(folder, `${e.tag}.sql`), 'utf8');
      expect(text, e.tag).not.toContain('"public".');
    }
  });

  it('rebuilds no SQLite table unless the rebuild is reviewed', () => {
    if (dialect !== 'sqlite') return;
    for (const e of journal.entries) {
      const text = fs.readFileSync(path.join(folder, `${e.tag}.sql`), 'utf8');
      if (/\bDROP\s+TABLE\b/i.test(text)) expect(REVIEWED_SQLITE_REBUILDS, e.tag).toHaveProperty(e.tag);
    }
  });
});

describe('superseded hashes', () => {
  it('map 0.1.0\'s hash of the Postgres tables migration (REFERENCES "public"."sessions") to its tag', () => {
    expect(SUPERSEDED_HASHES.get(OLD_PG_TABLES_HASH)).toBe('0001_hermes_v11_tables');
  });

  it('are never a hash a shipped migration has now', () => {
    const current = new Set(
      [...readMigrations(shippedFolder('sqlite')), ...readMigrations(shippedFolder('pg'))].map((m) => m.hash),
    );
    for (const [hash, tag] of SUPERSEDED_HASHES) expect(current.has(hash), tag).toBe(false);
  });
});

describe('migration reader', () => {
  it('refuses a journal whose timestamps go backwards', () => {
    const folder = folderWith('sqlite', [{ tag: '9000_late', when: 1, sql: 'SELECT 1;' }]);
    // folderWith sorts by time; put the entry back at the end to simulate a bad merge.
    const journalPath = path.join(folder, 'meta', '_journal.json');
    const journal = JSON.parse(fs.readFileSync(journalPath, 'utf8'));
    journal.entries.push(journal.entries.shift());
    fs.writeFileSync(journalPath, JSON.stringify(journal));
    expect(() => readMigrations(folder)).toThrow(MigrationError);
    expect(() => readMigrations(folder)).toThrow(/strictly increase/);
  });
});
