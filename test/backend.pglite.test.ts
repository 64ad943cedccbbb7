import { pgliteHarness } from './backends.js';
import { runContractSuite } from './contract/index.js';

runContractSuite(pgliteHarness());
