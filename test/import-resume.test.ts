/**
 * An import killed with SIGKILL at random moments and run again finishes with exactly the source's rows:
 * none missing, none duplicated, counters as in the source. SQLite file and the Postgres server.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { buildHermesFile } from '../bench/import.js';
import { openStore } from '../src/index.js';
import { type Harness, postgresHarness, reportAvailability, sqliteFileHarness } from './backends.js';
import { spawnTs, waitForLine } from './helpers/processes.js';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hsdb-resume-'));
const source = path.join(dir, 'state.db');
buildHermesFile(source, 20_000);
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

const harnesses: Harness[] = [sqliteFileHarness(), await postgresHarness()];

for (const h of harnesses) {
  const available = reportAvailability(h);
  describe.skipIf(!available)(
    `import killed and resumed [${h.name}]${available ? '' : ` (skipped: ${h.unavailable})`}`,
    () => {
      afterAll(() => h.cleanup());

      it('ends with exactly the source rows after SIGKILLs at random moments', async () => {
        const url = await h.freshUrl();
        let killed = 0;
        for (let round = 0; round < 4; round++) {
          const child = spawnTs('./import-worker.ts', [source, url]);
          const finished = waitForLine(child, (l) => l.startsWith('{')).then(
            () => true,
            () => false,
          );
          const delay = 300 + Math.random() * 1500;
          const timer = new Promise<boolean>((resolve) => setTimeout(() => resolve(false), delay));
          const done = await Promise.race([finished, timer]);
          if (!done) {
            child.kill('SIGKILL');
            killed++;
          }
          await new Promise((resolve) => child.once('exit', resolve).once('error', resolve));
          if (done) break;
        }
        // The last run, uninterrupted.
        const final = spawnTs('./import-worker.ts', [source, url]);
        expect(JSON.parse(await waitForLine(final, (l) => l.startsWith('{')))).toMatchObject({
          done: true,
          messages: 20_000,
        });

        const raw = new Database(source, { readonly: true });
        const store = await openStore(url);
        try {
          expect(await store.messageCount()).toBe(20_000);
          const sessions = raw.prepare('SELECT id, message_count FROM sessions').all() as Array<{
            id: string;
            message_count: number;
          }>;
          expect(await store.sessionCount()).toBe(sessions.length);
          for (const s of sessions.slice(0, 50)) {
            expect((await store.getSession(s.id))!.messageCount).toBe(s.message_count);
            expect(await store.messageCount({ sessionId: s.id })).toBe(s.message_count);
          }
          // Both search indexes complete and consistent (SQLite builds them after the pages; a kill may land
          // between the two), and search finds an imported message.
          if (h.dialect === 'sqlite') {
            const db = new Database(url.replace(/^sqlite:/, ''));
            try {
              for (const t of ['messages_fts', 'messages_fts_trigram']) {
                const missing = db
                  .prepare(
                    `SELECT COUNT(*) FROM messages m WHERE NOT EXISTS (SELECT 1 FROM ${t} f WHERE f.rowid = m.id)`,
                  )
                  .pluck()
                  .get();
                expect([t, db.prepare(`SELECT COUNT(*) FROM ${t}`).pluck().get(), missing]).toEqual([t, 20_000, 0]);
                db.prepare(`INSERT INTO ${t}(${t}, rank) VALUES ('integrity-check', 1)`).run();
              }
            } finally {
              db.close();
            }
          }
          const sample = raw
            .prepare("SELECT id, content FROM messages WHERE content LIKE '% % % %' ORDER BY id LIMIT 1")
            .get() as {
            id: number;
            content: string;
          };
          const phrase = sample.content.split(' ').slice(0, 3).join(' ');
          expect((await store.searchMessages(`"${phrase}"`, { limit: -1 })).map((m) => m.id)).toContain(sample.id);
          const maxId = raw.prepare('SELECT MAX(id) FROM messages').pluck().get() as number;
          await store.createSession('after', 'cli');
          expect(await store.appendMessage('after', 'user', 'x')).toBeGreaterThan(maxId);
        } finally {
          raw.close();
          await store.close();
        }
        // Say whether the kills landed mid-import (a fast machine may finish first).
        console.info(`[${h.name}] import interrupted ${killed} time(s) before the final run`);
      }, 180_000);
    },
  );
}
