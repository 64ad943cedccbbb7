/**
 * Opening checks that the search structures of the recorded migrations exist (what `drizzle-kit push` without
 * a tablesFilter drops) and names each missing one, with migrate on or off, instead of failing at the first
 * search. `allowMissingSearchStructures` opens such a store with a warning, to read it out.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { pg_trgm } from '@electric-sql/pglite/contrib/pg_trgm';
import Database from 'better-sqlite3';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MigrationError, migrationsFolder, openStore } from '../src/index.js';
import { readMigrations } from '../src/db/migrations.js';
import { pgFolderUpTo } from './helpers/migration-folders.js';
import { type Harness, postgresHarness, reportAvailability } from './backends.js';

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
});
function sqliteFile(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hsdb-structures-'));
  dirs.push(dir);
  return path.join(dir, 'store.db');
}

/** The MigrationError opening `open()` throws, checked to be MISSING_SEARCH_STRUCTURES. */
async function missingError(open: () => Promise<unknown>): Promise<string> {
  const error = await open().then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(MigrationError);
  expect((error as MigrationError).reason).toBe('MISSING_SEARCH_STRUCTURES');
  const message = (error as Error).message;
  expect(message).toContain('drizzle-kit push');
  expect(message).toContain('tablesFilter');
  return message;
}

describe('SQLite', () => {
  it('names a dropped FTS5 table and a dropped trigger, with and without migrate', async () => {
    const file = sqliteFile();
    const store = await openStore(`sqlite:${file}`);
    await store.createSession('s-1', 'cli');
    await store.close();
    const db = new Database(file);
    db.exec('DROP TABLE messages_fts_trigram; DROP TRIGGER messages_fts_insert;');
    db.close();

    for (const migrate of [true, false]) {
      const message = await missingError(() => openStore(`sqlite:${file}`, { migrate }));
      expect(message).toContain('table messages_fts_trigram');
      expect(message).toContain('trigger messages.messages_fts_insert');
      expect(message).not.toContain('messages_fts_delete');
      // Nothing else is reported missing: the word table and the other triggers are there.
      expect(message).not.toMatch(/table messages_fts[,.]/);
    }
    await missingError(() => openStore(`sqlite:${file}`, { readonly: true }));
  });

  it('opens with a warning under allowMissingSearchStructures, to read the sessions out', async () => {
    const file = sqliteFile();
    const store = await openStore(`sqlite:${file}`);
    await store.createSession('s-1', 'cli');
    await store.close();
    const db = new Database(file);
    db.exec('DROP TABLE messages_fts;');
    db.close();
    const warnings: string[] = [];
    const onWarning = (w: Error) => warnings.push(w.message);
    process.on('warning', onWarning);
    try {
      const damaged = await openStore(`sqlite:${file}`, { readonly: true, allowMissingSearchStructures: true });
      expect((await damaged.getSession('s-1'))?.source).toBe('cli');
      await damaged.close();
      await new Promise((resolve) => setImmediate(resolve)); // warnings are emitted on the next tick
    } finally {
      process.off('warning', onWarning);
    }
    expect(warnings.some((w) => w.includes('table messages_fts') && w.includes('drizzle-kit push'))).toBe(true);
  });

  it('checks an app-provided Database too', async () => {
    const db = new Database(':memory:');
    const store = await openStore(db);
    await store.close();
    db.exec('DROP TRIGGER messages_fts_trigram_update;');
    const message = await missingError(() => openStore(db));
    expect(message).toContain('trigger messages.messages_fts_trigram_update');
    expect(db.open).toBe(true);
    db.close();
  });
});

describe('PGlite', () => {
  it('names a dropped column (and the index that went with it) and a dropped trigger, not what a later migration dropped', async () => {
    const pg = new PGlite({ extensions: { pg_trgm } });
    const store = await openStore(pg);
    await store.close();
    await pg.exec(
      'ALTER TABLE messages DROP COLUMN search_cjk; DROP TRIGGER messages_search_queue_insert ON messages;',
    );
    for (const migrate of [true, false]) {
      const message = await missingError(() => openStore(pg, { migrate }));
      expect(message).toContain('column messages.search_cjk');
      expect(message).toContain('index idx_messages_search_cjk');
      expect(message).toContain('trigger messages.messages_search_queue_insert');
      expect(message).not.toContain('message_search_blocks');
      // Created by 0002/0004, dropped by 0011: not expected of a store that recorded 0011.
      for (const gone of ['search_vector', 'idx_messages_search_trgm', 'message_search_stats'])
        expect(message).not.toContain(gone);
    }
    await pg.close();
  });

  it('expects only what the recorded migrations create (an older store is not reported)', async () => {
    const pg = new PGlite({ extensions: { pg_trgm } });
    // A store as the version with migrations up to 0004 left it: no block index yet.
    const older = await openStore(pg, { migrationsFolder: pgFolderUpTo('0004_bounded_search_vector') });
    await older.close();
    const reopened = await openStore(pg, { migrate: false });
    // Pending: every shipped migration after 0004, whatever later versions add.
    const shipped = readMigrations(migrationsFolder('pg')).map((m) => m.tag);
    expect((await reopened.migrationStatus()).pending).toEqual(
      shipped.slice(shipped.indexOf('0004_bounded_search_vector') + 1),
    );
    expect(shipped.indexOf('0004_bounded_search_vector')).toBeGreaterThan(0);
    await reopened.close();
    await pg.exec('DROP TABLE message_search_stats;');
    const message = await missingError(() => openStore(pg, { migrate: false }));
    expect(message).toContain('table message_search_stats');
    expect(message).not.toContain('message_search_blocks');
    await pg.close();
  });
});

describe('Postgres (real server)', () => {
  let harness: Harness;
  let available = false;
  beforeAll(async () => {
    harness = await postgresHarness();
    available = reportAvailability(harness);
  });
  afterAll(async () => {
    await harness?.cleanup();
  });

  it('names the objects drizzle-kit push drops: search columns, GIN indexes, tables', async (ctx) => {
    if (!available) ctx.skip('no Postgres server (see the warning above)');
    const url = await harness.freshUrl();
    const store = await openStore(url);
    await store.close();
    const admin = postgres(url, { max: 1, onnotice: () => {} });
    try {
      await admin.unsafe(
        'ALTER TABLE messages DROP COLUMN search_cjk; DROP TABLE message_search_blocks; DROP FUNCTION message_search_text CASCADE',
      );
    } finally {
      await admin.end({ timeout: 5 });
    }
    const message = await missingError(() => openStore(url));
    expect(message).toContain('column messages.search_cjk');
    expect(message).toContain('index idx_messages_search_cjk');
    expect(message).toContain('function message_search_text');
    expect(message).toContain('table message_search_blocks');
    expect(message).not.toContain('column messages.search_vector');
  });
});
