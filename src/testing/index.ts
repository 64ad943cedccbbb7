/**
 * hermes-sessiondb/testing: the contract suite every backend runs, for vitest. A backend certifies itself by
 * giving a harness (fresh stores, and the capabilities it lacks with their reasons) to `runContractSuite`:
 * the better-auth pattern. Our own backends (SQLite file and memory, PGlite, Postgres) run this very entry.
 *
 * Needs `vitest` and `fast-check` (optional peer dependencies of the package).
 */
import { afterAll, describe } from 'vitest';
import { handoffsContract } from './contracts/handoffs.js';
import { lineageContract } from './contracts/lineage.js';
import { messagesContract } from './contracts/messages.js';
import { searchContract } from './contracts/search.js';
import { sessionsContract } from './contracts/sessions.js';
import { settleContract } from './contracts/settle.js';
import { telegramContract } from './contracts/telegram.js';
import { titlesContract } from './contracts/titles.js';
import { validationContract } from './contracts/validation.js';
import { useStore } from './fixture.js';
import type { ContractHarness } from './harness.js';

export type { ContractCapability, ContractHarness, FailingInsertSql } from './harness.js';
export { TestClock } from './clock.js';
export { type StoreFixture, emptyStore, rawExec, useStore } from './fixture.js';

/**
 * Whether the harness can run here. An unavailable harness is skipped with its reason printed, or, when
 * `required`, fails the run (a CI that must test a server does not pass because the server was down).
 */
export function harnessAvailable(h: ContractHarness): boolean {
  if (h.unavailable === undefined) return true;
  if (h.required) throw new Error(`[${h.name}] is required here but unavailable: ${h.unavailable}`);
  console.warn(`[${h.name}] skipped: ${h.unavailable}`);
  return false;
}

/**
 * Per-test time limit: some contracts race 50 rounds of writes or open a database several times, slower than
 * vitest's 5 s default on a small machine or a remote server. The suite sets it so a harness needs no config.
 */
export const CONTRACT_TEST_TIMEOUT_MS = 120_000;

/** Register the whole contract suite (vitest `describe` blocks) for one backend. */
export function runContractSuite(h: ContractHarness): void {
  const available = harnessAvailable(h);
  const name = `contract [${h.name}]${available ? '' : ` (skipped: ${h.unavailable})`}`;
  describe.skipIf(!available)(name, { timeout: CONTRACT_TEST_TIMEOUT_MS }, () => {
    afterAll(() => h.cleanup(), CONTRACT_TEST_TIMEOUT_MS);
    settleContract(h);
    describe('SessionDB behaviour', () => {
      const f = useStore(h);
      sessionsContract(f);
      messagesContract(f);
      titlesContract(f);
      lineageContract(f);
      handoffsContract(f);
      telegramContract(f);
      const searchSkip = h.skips?.search;
      if (searchSkip === undefined) searchContract(f);
      else describe.skip(`message search (skipped: ${searchSkip})`, () => searchContract(f));
      validationContract(f);
    });
  });
}
