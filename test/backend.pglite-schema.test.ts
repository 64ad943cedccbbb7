/** The whole contract suite on PGlite with every store in the schema 'hermes' (see backend.pg-schema.test.ts). */
import { pgliteHarness } from './backends.js';
import { runContractSuite } from './contract/index.js';

runContractSuite(pgliteHarness('hermes'));
