import { pgliteHarness } from './backends.js';
import { runBackendSuite } from './contract/index.js';

runBackendSuite(pgliteHarness());
