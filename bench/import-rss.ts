/** Child process for the bench: import a Hermes file into a fresh SQLite store and print the peak RSS (MiB). */
import { importHermesStateDb, openStore } from '../src/index.js';

const [source, target] = process.argv.slice(2);
const store = await openStore(`sqlite:${target!}`);
const report = await importHermesStateDb(source!, store);
await store.close();
process.stdout.write(
  `${JSON.stringify({ messages: report.messages, peakRssMiB: process.resourceUsage().maxRSS / 1024 })}\n`,
);
