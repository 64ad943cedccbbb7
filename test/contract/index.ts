/**
 * Our backends' full suite: the exported contract suite (hermes-sessiondb/testing, the one a third-party
 * backend runs) plus what only our dialects promise: the migrated schema equals Hermes' and our migrator's
 * behaviour (locks, history, drizzle-kit interop).
 */
import { afterAll, describe } from 'vitest';
import { harnessAvailable, runContractSuite } from '../../src/testing/index.js';
import type { Harness } from '../backends.js';
import { migrationsContract } from './migrations.contract.js';
import { schemaContract } from './schema.contract.js';

export function runBackendSuite(h: Harness): void {
  runContractSuite(h);
  const available = harnessAvailable(h);
  describe.skipIf(!available)(`dialect [${h.name}]${available ? '' : ` (skipped: ${h.unavailable})`}`, () => {
    afterAll(() => h.cleanup());
    schemaContract(h);
    migrationsContract(h);
  });
}
