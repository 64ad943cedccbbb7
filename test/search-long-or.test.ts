/**
 * Word queries that OR as many short terms as the 2,048-character query cap allows: every backend returns
 * SQLite's hits in SQLite's order (PGlite once returned none: the ranking expression nested one term per phrase).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type SessionStore, openStore } from '../src/index.js';
import { MAX_QUERY_CHARS } from '../src/repos/search.js';
import { type Harness, pgliteHarness, postgresHarness, reportAvailability, mariadbHarness } from './backends.js';

const WORDS = ['ok', 'go', 'up', 'in', 'ms', 'db', 'id', 'io', 'is', 'on', 'to', 'we', 'x', 'y', 'z'];

/** `terms` joined with OR, as many as fit in the query cap. */
function capLength(terms: (i: number) => string): string {
  let query = terms(0);
  for (let i = 1; ; i++) {
    const next = `${query} OR ${terms(i)}`;
    if (next.length > MAX_QUERY_CHARS) return query;
    query = next;
  }
}

const QUERIES: Record<string, string> = {
  numbers: capLength((i) => String(i)),
  'one word repeated': capLength(() => 'ms'),
};

const others: Harness[] = [pgliteHarness(), await postgresHarness(), await mariadbHarness()];

describe('cap-length OR queries', () => {
  const stores: Record<string, SessionStore> = {};

  beforeAll(async () => {
    const load = async (name: string, store: SessionStore) => {
      stores[name] = store;
      await store.createSession('s', 'cli');
      for (let i = 0; i < 40; i++) {
        const words = WORDS.filter((_, k) => (i + k) % 3 === 0).join(' ');
        await store.appendMessage('s', 'user', `served request ${i} in ${i * 7} ms ${i % 4 === 0 ? words : ''}`);
      }
    };
    await load('sqlite', await openStore(':memory:'));
    for (const h of others) if (reportAvailability(h)) await load(h.name, await h.open());
  }, 60_000);
  afterAll(async () => {
    for (const s of Object.values(stores)) await s.close();
    for (const h of others) await h.cleanup();
  });

  for (const [name, query] of Object.entries(QUERIES)) {
    it(`${name}: the same hits in the same order as SQLite`, async () => {
      expect(query.length).toBeGreaterThan(MAX_QUERY_CHARS - 12);
      const expected = (await stores.sqlite!.searchMessages(query, { limit: 50 })).map((h) => h.id);
      expect(expected.length).toBeGreaterThan(10);
      for (const [backend, store] of Object.entries(stores)) {
        const ids = (await store.searchMessages(query, { limit: 50 })).map((h) => h.id);
        expect({ backend, ids }).toEqual({ backend, ids: expected });
      }
    }, 60_000);
  }
});
