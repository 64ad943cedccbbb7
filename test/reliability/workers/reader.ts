/** Child process for the contention test: search and list until told to stop; prints how many reads and errors. */
import { openStore } from '../../../src/index.js';

const [url] = process.argv.slice(2);
const store = await openStore(url!, { migrate: false });
let stop = false;
process.stdin.on('data', (d: Buffer) => {
  if (d.toString().includes('stop')) stop = true;
});
process.stdout.write('ready\n');
let reads = 0;
const errors: string[] = [];
while (!stop) {
  try {
    await store.searchMessages('contention', { limit: 20 });
    await store.listSessionsRich({ limit: 20 });
    reads += 2;
  } catch (error) {
    errors.push(`${(error as { code?: string }).code ?? ''} ${String(error)}`);
  }
  await new Promise((r) => setImmediate(r));
}
process.stdout.write(`${JSON.stringify({ reads, errors })}\n`);
await store.close();
