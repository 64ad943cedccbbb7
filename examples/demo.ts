/**
 * The main job on embedded defaults, no server needed: open an SQLite file store and a PGlite store,
 * write the same small conversation with a compression continuation into each, and read it back.
 * (`npm run demo`)
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { type SessionStore, openStore } from '../src/index.js';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hermes-sessiondb-demo-'));
const urls = [`sqlite:${path.join(dir, 'state.db')}`, `pglite:${path.join(dir, 'pgdata')}`];

async function conversation(store: SessionStore): Promise<void> {
  await store.createSession('root', 'cli', { model: 'anthropic/claude-sonnet-4.5', modelConfig: { temperature: 0.2 } });
  await store.setSessionTitle('root', 'Docker deploy');
  await store.appendMessage('root', 'user', 'How do I deploy with Docker?');
  await store.appendMessage('root', 'assistant', null, {
    toolCalls: [{ id: 'c1', type: 'function', function: { name: 'terminal', arguments: '{"command": "docker ps"}' } }],
  });
  await store.appendMessage('root', 'tool', 'CONTAINER ID   IMAGE', { toolCallId: 'c1', toolName: 'terminal' });
  await store.updateTokenCounts('root', { inputTokens: 1200, outputTokens: 80, estimatedCostUsd: 0.0042, apiCallCount: 1 });
  await store.endSession('root', 'compression');
  await store.createSession('continued', 'cli', { parentSessionId: 'root' });
  await store.setSessionTitle('continued', await store.getNextTitleInLineage('Docker deploy'));
  await store.appendMessage('continued', 'user', [{ type: 'text', text: 'And with compose?' }, { type: 'image_url', image_url: { url: 'data:,' } }]);
  await store.appendMessage('continued', 'assistant', 'Use docker compose up.');
}

try {
  for (const url of urls) {
    const started = performance.now();
    const store = await openStore(url);
    try {
      const migrated = await store.migrationStatus();
      await conversation(store);
      const [listed] = await store.listSessionsRich();
      const replay = await store.getMessagesAsConversation('continued', { includeAncestors: true });
      const root = await store.getSession('root');
      console.log(`\n${store.url} (${store.dialect}; ${(performance.now() - started).toFixed(0)} ms)`);
      console.log(`  migrations: ${migrated.applied.join(', ')}`);
      console.log(`  lineage of "continued": ${(await store.getLineage('continued')).join(' -> ')}`);
      console.log(`  compression tip of "root": ${await store.getCompressionTip('root')}`);
      console.log(`  listed: ${listed!.id} "${listed!.title}" (chain root ${listed!.lineageRootId}), preview "${listed!.preview}"`);
      console.log(`  root tokens in/out ${root!.inputTokens}/${root!.outputTokens}, cost $${root!.estimatedCostUsd}`);
      console.log(`  replay with ancestors: ${replay.map((m) => m.role).join(', ')}`);
    } finally {
      await store.close();
    }
  }
  console.log('\nSame calls, same answers, on an SQLite file and on embedded Postgres.');
} finally {
  fs.rmSync(dir, { recursive: true, force: true });
}
