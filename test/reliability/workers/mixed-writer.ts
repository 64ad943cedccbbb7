/**
 * Child process for the contention test: after "go", `count` rounds of appends (to its own session and a
 * shared one), title sets and token updates, timing each write. Prints one JSON line: ids, latencies, errors.
 */
import { openStore } from '../../../src/index.js';

const [url, worker, countText] = process.argv.slice(2);
const store = await openStore(url!, { migrate: false });
const own = `writer-${worker}`;
process.stdout.write('ready\n');
await new Promise<void>((resolve) => process.stdin.once('data', () => resolve()));
const ids: number[] = [];
const latencies: number[] = [];
const errors: string[] = [];
const timed = async <T>(write: () => Promise<T>): Promise<T | undefined> => {
  const started = performance.now();
  try {
    return await write();
  } catch (error) {
    errors.push(`${(error as { code?: string }).code ?? ''} ${String(error)}`);
    return undefined;
  } finally {
    latencies.push(performance.now() - started);
  }
};
for (let i = 0; i < Number(countText); i++) {
  const a = await timed(() => store.appendMessage(own, 'user', `writer ${worker} message ${i} contention`));
  if (a !== undefined) ids.push(a);
  const b = await timed(() => store.appendMessage('shared', 'assistant', `shared from ${worker} number ${i}`));
  if (b !== undefined) ids.push(b);
  if (i % 10 === 0) await timed(() => store.setSessionTitle(own, `Writer ${worker} round ${i}`));
  if (i % 5 === 0) await timed(() => store.updateTokenCounts(own, { inputTokens: 10, outputTokens: 1 }));
}
process.stdout.write(`${JSON.stringify({ ids, latencies, errors })}\n`);
await store.close();
