/**
 * The contract suite every backend runs. A third-party backend (MySQL, say) certifies itself by building a
 * Harness and calling `runContractSuite` — the better-auth pattern.
 */
import { afterAll, describe } from 'vitest';
import { type Harness, reportAvailability } from '../backends.js';
import { migrationsContract } from './migrations.contract.js';
import { schemaContract } from './schema.contract.js';

export function runContractSuite(h: Harness): void {
  const available = reportAvailability(h);
  describe.skipIf(!available)(`contract [${h.name}]${available ? '' : ` (skipped: ${h.unavailable})`}`, () => {
    afterAll(() => h.cleanup());
    schemaContract(h);
    migrationsContract(h);
  });
}
