/**
 * The contract suite every backend runs. A third-party backend (MySQL, say) certifies itself by building a
 * Harness and calling `runContractSuite` — the better-auth pattern.
 */
import { afterAll, describe } from 'vitest';
import { type Harness, reportAvailability } from '../backends.js';
import { useStore } from '../helpers/store-fixture.js';
import { handoffsContract } from './handoffs.contract.js';
import { lineageContract } from './lineage.contract.js';
import { messagesContract } from './messages.contract.js';
import { migrationsContract } from './migrations.contract.js';
import { schemaContract } from './schema.contract.js';
import { searchContract } from './search.contract.js';
import { sessionsContract } from './sessions.contract.js';
import { settleContract } from './settle.contract.js';
import { telegramContract } from './telegram.contract.js';
import { titlesContract } from './titles.contract.js';
import { validationContract } from './validation.contract.js';

export function runContractSuite(h: Harness): void {
  const available = reportAvailability(h);
  describe.skipIf(!available)(`contract [${h.name}]${available ? '' : ` (skipped: ${h.unavailable})`}`, () => {
    afterAll(() => h.cleanup());
    schemaContract(h);
    migrationsContract(h);
    settleContract(h);
    describe('SessionDB behaviour', () => {
      const f = useStore(h);
      sessionsContract(f);
      messagesContract(f);
      titlesContract(f);
      lineageContract(f);
      handoffsContract(f);
      telegramContract(f);
      searchContract(f);
      validationContract(f);
    });
  });
}
