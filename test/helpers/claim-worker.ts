/** Child process for the claim race: when told "go", try to claim every listed session; print the ones won. */
import { openStore } from '../../src/index.js';

const [url, idsText] = process.argv.slice(2);
const ids = idsText!.split(',');
const store = await openStore(url!, { migrate: false });
process.stdout.write('ready\n');
await new Promise<void>((resolve) => process.stdin.once('data', () => resolve()));
const won: string[] = [];
try {
  for (const id of ids) if (await store.claimHandoff(id)) won.push(id);
  process.stdout.write(`${JSON.stringify({ ok: true, won })}\n`);
} catch (error) {
  process.stdout.write(`${JSON.stringify({ ok: false, won, error: String(error) })}\n`);
} finally {
  await store.close();
}
