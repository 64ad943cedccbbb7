/**
 * The store on its own, by URL (it opens and closes its own connection), for the steps around drizzle-kit:
 *   npx tsx src/store-tool.ts status  [--default-layout]   open (migrating our tables), print migration status
 *   npx tsx src/store-tool.ts seed    [--default-layout]   write one session with two messages
 *   npx tsx src/store-tool.ts search <query> [--default-layout]
 * Without --default-layout the store lives in schema "hermes" (as in main.ts); with it, in `public`.
 * Prints one JSON line.
 */
import { openStore } from 'hermes-sessiondb';
import { databaseUrl } from './db.js';
import { HERMES_SCHEMA } from './hermes.js';

const args = process.argv.slice(2);
const defaultLayout = args.includes('--default-layout');
const [command, query] = args.filter((a) => !a.startsWith('--'));

const store = await openStore(databaseUrl(), defaultLayout ? {} : { schema: HERMES_SCHEMA });
try {
  if (command === 'status') {
    const status = await store.migrationStatus();
    console.log(JSON.stringify(status));
  } else if (command === 'seed') {
    const sessionId = `seed-${Date.now().toString(36)}`;
    await store.createSession(sessionId, 'cli');
    await store.appendMessages(sessionId, [
      { role: 'user', content: 'The nightly deploy failed with a healthcheck timeout' },
      { role: 'assistant', content: 'Raise the healthcheck timeout to 30 seconds' },
    ]);
    console.log(JSON.stringify({ sessionId }));
  } else if (command === 'search' && query) {
    const hits = await store.searchMessages(query, { limit: 10 });
    console.log(JSON.stringify(hits.map((h) => ({ sessionId: h.sessionId, role: h.role }))));
  } else {
    throw new Error('usage: store-tool.ts status | seed | search <query> [--default-layout]');
  }
} finally {
  await store.close();
}
