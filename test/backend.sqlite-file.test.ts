import { sqliteFileHarness } from './backends.js';
import { runContractSuite } from './contract/index.js';

runContractSuite(sqliteFileHarness());
