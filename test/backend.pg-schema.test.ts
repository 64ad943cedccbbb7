/**
 * The whole contract suite on real Postgres with every store in its own schema (`openStore(url, { schema: 'hermes' })`):
 * runtime SQL, triggers, search and migrations must never fall back to public or the search_path.
 */
import { postgresHarness } from './backends.js';
import { runBackendSuite } from './contract/index.js';

runBackendSuite(await postgresHarness('hermes'));
