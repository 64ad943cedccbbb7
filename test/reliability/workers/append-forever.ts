/**
 * Child process for the durability test: append messages (and token updates) to one session until it is
 * killed, printing each id only after appendMessage resolved, i.e. after its transaction committed.
 */
import { openStore } from '../../../src/index.js';

const [url, sessionId, tag] = process.argv.slice(2);
const store = await openStore(url!, { migrate: false });
process.stdout.write('ready\n');
for (let i = 0; ; i++) {
  const id = await store.appendMessage(
    sessionId!,
    i % 3 === 0 ? 'assistant' : 'user',
    `${tag} message ${i} durable-${tag}-${i}`,
    {
      toolCalls: i % 5 === 0 ? [{ id: `call_${tag}_${i}`, function: { name: 'terminal', arguments: '{}' } }] : null,
    },
  );
  process.stdout.write(`${id}\n`);
  if (i % 7 === 0) await store.updateTokenCounts(sessionId!, { inputTokens: 3, outputTokens: 1 });
}
