/**
 * The main job on embedded defaults, no server needed: open a SQLite file store and a PGlite store,
 * migrate both, and show what each holds. (`npm run demo`)
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openStore } from '../src/index.js';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hermes-sessiondb-demo-'));
const urls = [`sqlite:${path.join(dir, 'state.db')}`, `pglite:${path.join(dir, 'pgdata')}`];

try {
  for (const url of urls) {
    const started = performance.now();
    const store = await openStore(url, { migrate: false });
    const report = await store.migrate();
    const again = await store.migrate();
    const schema = await store.introspect();
    const ms = (performance.now() - started).toFixed(0);
    console.log(`\n${store.url} (${store.dialect}, ${ms} ms)`);
    console.log(`  migrations applied: ${report.applied.join(', ')}`);
    console.log(`  migrating again applies: ${again.applied.length === 0 ? 'nothing (up to date)' : again.applied.join(', ')}`);
    for (const [table, columns] of Object.entries(schema.tables)) {
      console.log(`  ${table.padEnd(28)} ${String(columns.length).padStart(2)} columns`);
    }
    const search = [
      ...schema.virtualTables.map((v) => `${v.name} (FTS5 ${v.using.includes('trigram') ? 'trigram' : 'unicode61'})`),
      ...schema.indexes.filter((i) => i.name.startsWith('idx_messages_search')).map((i) => i.name),
    ];
    console.log(`  search structures: ${search.join(', ')}`);
    if (schema.extensions.length > 0) console.log(`  extensions: ${schema.extensions.join(', ')}`);
    await store.close();
  }
  console.log('\nBoth stores are migrated. Session and message APIs arrive with the repositories issue.');
} finally {
  fs.rmSync(dir, { recursive: true, force: true });
}
