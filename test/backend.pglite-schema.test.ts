/** The whole contract suite on PGlite with every store in the schema 'hermes' (see backend.pg-schema.test.ts). */
import { pgliteHarness } from './backends.js';
import { runBackendSuite } from './contract/index.js';

runBackendSuite(pgliteHarness('hermes'));
