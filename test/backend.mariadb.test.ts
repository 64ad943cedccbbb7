import { mariadbHarness } from './backends.js';
import { runBackendSuite } from './contract/index.js';

runBackendSuite(await mariadbHarness());
