/**
 * One store per backend for the behaviour contracts, emptied before every test, with a clock the tests
 * control (so "100 days ago" is a clock setting, not a raw UPDATE).
 */
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, beforeEach } from 'vitest';
import type { PgBackend, SessionStore, SqliteBackend } from '../../src/index.js';
import type { Harness } from '../backends.js';

/** Starts at the fixture's "now" (2026-11-01) and moves 1 ms forward on every read, like a real clock. */
export class TestClock {
  static readonly START = 1_793_491_200;
  private t = TestClock.START;
  readonly now = (): number => {
    this.t = Math.round((this.t + 0.001) * 1e6) / 1e6;
    return this.t;
  };
  set(epochSeconds: number): void {
    this.t = epochSeconds;
  }
  advance(seconds: number): void {
    this.t += seconds;
  }
  /** The current reading without moving the clock. */
  peek(): number {
    return this.t;
  }
  reset(): void {
    this.t = TestClock.START;
  }
}

export interface StoreFixture {
  readonly store: SessionStore;
  readonly clock: TestClock;
  /** Run raw SQL (same text on both dialects) — only for setups the API deliberately cannot make. */
  raw(text: string): Promise<void>;
}

const TABLES = ['telegram_dm_topic_bindings', 'telegram_dm_topic_mode', 'messages', 'sessions', 'state_meta'];

export async function rawExec(store: SessionStore, text: string): Promise<void> {
  const backend = store.backend;
  if (backend.dialect === 'sqlite') (backend as SqliteBackend).client.exec(text);
  else {
    // The text names our tables unqualified: run it with the store's schema as the search_path.
    const pg = backend as PgBackend;
    await pg.transaction(async (tx) => {
      await tx.execute(sql`SELECT set_config('search_path', ${`"${pg.schema}"`}, true)`);
      await tx.execute(sql.raw(text));
    });
  }
}

export async function emptyStore(store: SessionStore): Promise<void> {
  if (store.dialect === 'sqlite') {
    await rawExec(
      store,
      `UPDATE sessions SET parent_session_id = NULL; ${TABLES.map((t) => `DELETE FROM ${t};`).join(' ')}
       DELETE FROM sqlite_sequence WHERE name = 'messages';`,
    );
  } else {
    await rawExec(store, `TRUNCATE ${TABLES.join(', ')} RESTART IDENTITY`);
  }
}

export function useStore(h: Harness): StoreFixture {
  const clock = new TestClock();
  let store: SessionStore | undefined;
  beforeAll(async () => {
    store = await h.open({ clock: clock.now });
  });
  beforeEach(async () => {
    clock.reset();
    await emptyStore(store!);
  });
  afterAll(async () => {
    await store?.close();
  });
  return {
    get store() {
      return store!;
    },
    clock,
    raw: (text) => rawExec(store!, text),
  };
}
