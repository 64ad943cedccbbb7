/** Child process for the kill-and-resume test: import a Hermes file into a store and say "done". */
import { importHermesStateDb, openStore } from '../../src/index.js';

const [file, url] = process.argv.slice(2);
const store = await openStore(url!);
try {
  const report = await importHermesStateDb(file!, store);
  process.stdout.write(`${JSON.stringify({ done: true, messages: report.messages })}\n`);
} finally {
  await store.close();
}
