/** The contract suite's store fixture, shared by our other suites (the one hermes-sessiondb/testing exports). */
export { TestClock, type StoreFixture, emptyStore, rawExec, useStore } from '../../src/testing/index.js';
