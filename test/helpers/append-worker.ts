/**
 * Child process for the SQLite contention test: append `count` messages to one session as fast as it can
 * once told "go", and print every id it was given. Any error escaping is printed and fails the run.
 */
import { openStore } from '../../src/index.js';

const [url, sessionId, countText, worker] = process.argv.slice(2);
const store = await openStore(url!, { migrate: false });
process.stdout.write('ready\n');
await new Promise<void>((resolve) => process.stdin.once('data', () => resolve()));
const ids: number[] = [];
try {
  for (let i = 0; i < Number(countText); i++)
    ids.push(await store.appendMessage(sessionId!, 'user', `w${worker}-${i}`));
  process.stdout.write(`${JSON.stringify({ ok: true, ids })}\n`);
} catch (error) {
  process.stdout.write(`${JSON.stringify({ ok: false, ids, error: String(error) })}\n`);
} finally {
  await store.close();
}
