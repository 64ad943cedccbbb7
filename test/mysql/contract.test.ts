import { runContractSuite } from '../../src/testing/index.js';
import { mariadbHarness } from '../helpers/mariadb.js';

// The exported contract suite, as a third-party backend would run it (the MySQL schema and migrator have
// their own tests beside this file).
runContractSuite(await mariadbHarness());
