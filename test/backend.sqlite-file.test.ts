import { sqliteFileHarness } from './backends.js';
import { runBackendSuite } from './contract/index.js';

runBackendSuite(sqliteFileHarness());
