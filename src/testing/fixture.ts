/**
 * One store per backend for the behaviour contracts, emptied before every test, with a clock the tests
 * control (so "100 days ago" is a clock setting, not a raw UPDATE).
 */
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, beforeEach } from 'vitest';
import type { MysqlBackend, PgBackend, SessionStore, SqliteBackend } from '../index.js';
import { TestClock } from './clock.js';
import type { ContractCapability, ContractHarness, FailingInsertSql } from './harness.js';

export interface StoreFixture {
  readonly store: SessionStore;
  readonly clock: TestClock;
  /** Run one setup statement (plain SQL every dialect reads): only for states the API cannot make. */
  raw(statement: string): Promise<void>;
  /** How this backend makes a message INSERT fail, or why it cannot. */
  readonly failingInsert: FailingInsertSql | { skip: string };
  /** Why the backend lacks `capability` (a test then skips, naming the reason), or undefined when it has it. */
  skipReason(capability: ContractCapability): string | undefined;
}

/** Opening a store may migrate a fresh database (a WASM Postgres boot, a remote server): beyond vitest's 10 s. */
const HOOK_TIMEOUT_MS = 120_000;

const TABLES = ['telegram_dm_topic_bindings', 'telegram_dm_topic_mode', 'messages', 'sessions', 'state_meta'];

/** Run SQL on a SQLite or Postgres store (on Postgres with the store's schema as the search_path). */
export async function rawExec(store: SessionStore, text: string): Promise<void> {
  const backend = store.backend;
  if (backend.dialect === 'sqlite') (backend as SqliteBackend).client.exec(text);
  else if (backend.dialect === 'pg') {
    const pg = backend as PgBackend;
    await pg.transaction(async (tx) => {
      await tx.execute(sql`SELECT set_config('search_path', ${`"${pg.schema}"`}, true)`);
      await tx.execute(sql.raw(text));
    });
  } else if (backend.dialect === 'mysql') {
    // One statement per call (the store's connections run no multi-statement text), in ANSI mode as the store's.
    await (backend as MysqlBackend).withConnection(async (c) => {
      await c.query(text);
    });
  } else {
    throw new Error(
      `no built-in raw SQL for dialect ${String((backend as { dialect: unknown }).dialect)}: give the harness exec()`,
    );
  }
}

/** Empty every table of a SQLite or Postgres store; message ids start from 1 again. */
export async function emptyStore(store: SessionStore): Promise<void> {
  if (store.dialect === 'sqlite') {
    await rawExec(
      store,
      `UPDATE sessions SET parent_session_id = NULL; ${TABLES.map((t) => `DELETE FROM ${t};`).join(' ')}
       DELETE FROM sqlite_sequence WHERE name = 'messages';`,
    );
  } else if (store.dialect === 'pg') {
    await rawExec(store, `TRUNCATE ${TABLES.join(', ')} RESTART IDENTITY`);
  } else if (store.dialect === 'mysql') {
    // TRUNCATE restarts AUTO_INCREMENT; it refuses a table other tables reference unless checks are off.
    await (store.backend as MysqlBackend).withConnection(async (c) => {
      await c.query('SET foreign_key_checks = 0');
      try {
        for (const t of [...TABLES, 'message_search']) await c.query(`TRUNCATE TABLE ${t}`);
      } finally {
        await c.query('SET foreign_key_checks = 1');
      }
    });
  } else {
    throw new Error(`no built-in empty() for dialect ${String(store.dialect)}: give the harness empty()`);
  }
}

const BUILT_IN_FAILING_INSERT: Record<string, FailingInsertSql> = {
  sqlite: {
    install: [
      "CREATE TRIGGER boom BEFORE INSERT ON messages WHEN NEW.content = 'BOOM' BEGIN SELECT RAISE(ABORT, 'boom'); END",
    ],
    remove: ['DROP TRIGGER boom'],
  },
  pg: {
    install: [
      "CREATE FUNCTION boom() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN IF NEW.content = 'BOOM' THEN RAISE EXCEPTION 'boom'; END IF; RETURN NEW; END $$",
      'CREATE TRIGGER boom BEFORE INSERT ON messages FOR EACH ROW EXECUTE FUNCTION boom()',
    ],
    remove: ['DROP TRIGGER boom ON messages', 'DROP FUNCTION boom()'],
  },
  mysql: {
    install: [
      "CREATE TRIGGER boom BEFORE INSERT ON messages FOR EACH ROW BEGIN IF NEW.content = 'BOOM' THEN SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'boom'; END IF; END",
    ],
    remove: ['DROP TRIGGER boom'],
  },
};

export function useStore(h: ContractHarness): StoreFixture {
  const clock = new TestClock();
  let store: SessionStore | undefined;
  const exec = (statement: string) => (h.exec ? h.exec(store!, statement) : rawExec(store!, statement));
  beforeAll(async () => {
    store = await h.open({ clock: clock.now });
  }, HOOK_TIMEOUT_MS);
  beforeEach(async () => {
    clock.reset();
    await (h.empty ? h.empty(store!) : emptyStore(store!));
  }, HOOK_TIMEOUT_MS);
  afterAll(async () => {
    await store?.close();
  }, HOOK_TIMEOUT_MS);
  return {
    get store() {
      return store!;
    },
    clock,
    raw: exec,
    skipReason: (capability) => h.skips?.[capability],
    get failingInsert() {
      const skip = h.skips?.['failing-insert'];
      if (skip !== undefined) return { skip };
      return (
        h.failingInsert ??
        BUILT_IN_FAILING_INSERT[store!.dialect] ?? {
          skip: `the harness gives no failingInsert SQL for dialect ${store!.dialect}`,
        }
      );
    },
  };
}
