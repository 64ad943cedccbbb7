import { postgresHarness } from './backends.js';
import { runContractSuite } from './contract/index.js';

runContractSuite(await postgresHarness());
