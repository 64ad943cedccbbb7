/**
 * The main job on embedded defaults, no server needed (`npm run demo`):
 *   1. write a small Hermes-format state.db (examples/hermes-state-db.ts),
 *   2. import it into an SQLite file store and into an embedded Postgres (PGlite) store, verified,
 *   3. search both (words, a phrase, Chinese), follow a compression chain, replay it with ancestors.
 * Same calls, same answers on both backends. The files live in a temporary folder, removed at the end.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { importHermesStateDb, openStore } from '../src/index.js';
import { writeHermesStateDb } from './hermes-state-db.js';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hermes-sessiondb-demo-'));
const hermesFile = path.join(dir, 'state.db');
const urls = [`sqlite:${path.join(dir, 'sessions.db')}`, `pglite:${path.join(dir, 'pgdata')}`];
const oneLine = (text: string | null) => (text ?? '').replace(/\s+/g, ' ').trim();

try {
  writeHermesStateDb(hermesFile);
  console.log(`Wrote a Hermes v11 state.db: ${hermesFile}`);
  for (const url of urls) {
    const store = await openStore(url); // creates and migrates the store
    try {
      const report = await importHermesStateDb(hermesFile, store, { verify: true });
      const verified = report.verification?.ok
        ? 'verified'
        : `NOT verified: ${report.verification?.problems.join('; ')}`;
      console.log(`\n${store.url} (${store.dialect})`);
      console.log(
        `  import: ${report.sessions} sessions, ${report.messages} messages in ${report.seconds.toFixed(2)} s; ${verified}`,
      );

      for (const query of ['docker', '"healthcheck port"', '记忆断裂', 'nginx*']) {
        const hits = await store.searchMessages(query, { limit: 3 });
        console.log(`  search ${query}: ${hits.length} hit(s)`);
        for (const h of hits) console.log(`    [${h.source}/${h.role}] ${h.sessionId}  ${oneLine(h.snippet)}`);
      }

      const tip = await store.getCompressionTip('20261027_091500_a1b2c3');
      const lineage = await store.getLineage(tip);
      const replay = await store.getMessagesAsConversation(tip, { includeAncestors: true });
      const titles = await Promise.all(lineage.map(async (id) => `${id} "${(await store.getSessionTitle(id)) ?? ''}"`));
      console.log(`  lineage: ${titles.join(' -> ')}`);
      console.log(`  descendants of the root: ${(await store.getDescendants(lineage[0]!)).join(', ')}`);
      console.log(
        `  replay of ${tip} with ancestors: ${replay.length} messages (${replay.map((m) => m.role).join(', ')})`,
      );
      const stats = await store.maintenance.stats();
      const cost = stats.bySource.reduce((sum, g) => sum + g.estimatedCostUsd, 0);
      console.log(`  stats: ${stats.sessions} sessions, ${stats.messages} messages, $${cost.toFixed(4)} estimated`);
    } finally {
      await store.close();
    }
  }
  console.log(
    "\nSame file, same sessions, lineage and matches on an SQLite file and on embedded Postgres (snippets are each engine's own).",
  );
  console.log(
    'The CLI does the same against a real server: npx hermes-sessiondb import ./state.db --to postgres://user@host:5432/db',
  );
} finally {
  fs.rmSync(dir, { recursive: true, force: true });
}
