/**
 * One store per backend for the behaviour contracts, emptied before every test, with a clock the tests
 * control (so "100 days ago" is a clock setting, not a raw UPDATE).
 */
import { afterAll, beforeAll, beforeEach } from 'vitest';
import type { EngineTesting } from '../db/engine.js';
import { engines } from '../db/engines.js';
import type { AnySessionStore, SessionStore } from '../index.js';
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

/** Run SQL on a store (on Postgres with the store's schema as the search_path). */
export async function rawExec(store: SessionStore, text: string): Promise<void> {
  await (await testingOf(store)).exec(store as AnySessionStore, text);
}

/** Empty every table of a store; message ids start from 1 again. */
export async function emptyStore(store: SessionStore): Promise<void> {
  await (await testingOf(store)).empty(store as AnySessionStore, TABLES);
}

/** The store's engine's fixture SQL, or an error asking the harness for its own. */
async function testingOf(store: SessionStore): Promise<EngineTesting> {
  const engine = engines.find((e) => e.name === store.dialect);
  if (!engine)
    throw new Error(`no built-in SQL for dialect ${String(store.dialect)}: give the harness exec() and empty()`);
  return engine.testing();
}

export function useStore(h: ContractHarness): StoreFixture {
  const clock = new TestClock();
  let store: SessionStore | undefined;
  let failingInsert: FailingInsertSql | undefined;
  const exec = (statement: string) => (h.exec ? h.exec(store!, statement) : rawExec(store!, statement));
  beforeAll(async () => {
    store = await h.open({ clock: clock.now });
    failingInsert = h.failingInsert ?? (await testingOf(store).catch(() => undefined))?.failingInsert;
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
      return failingInsert ?? { skip: `the harness gives no failingInsert SQL for dialect ${store!.dialect}` };
    },
  };
}
