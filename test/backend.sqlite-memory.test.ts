import { sqliteMemoryHarness } from './backends.js';
import { runContractSuite } from './contract/index.js';

runContractSuite(sqliteMemoryHarness());
