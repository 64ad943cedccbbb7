import { sqliteMemoryHarness } from './backends.js';
import { runBackendSuite } from './contract/index.js';

runBackendSuite(sqliteMemoryHarness());
