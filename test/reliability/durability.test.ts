/**
 * Durability: a child process appends messages and prints each id once appendMessage has resolved; it is
 * killed with SIGKILL at random moments, round after round. Afterwards every printed id is in the
 * database, the session's counters equal its rows, and the database (and, on SQLite, both FTS5 indexes)
 * pass their integrity checks. On Postgres and MariaDB it is the client process that dies mid-transaction.
 */
import type { ChildProcessWithoutNullStreams } from 'node:child_process';
import { sql } from 'drizzle-orm';
import { afterAll, describe, expect, it } from 'vitest';
import { type MysqlBackend, type PgBackend, type SqliteBackend, openStore } from '../../src/index.js';
import { type ContractHarness, harnessAvailable } from '../../src/testing/index.js';
import { postgresHarness, sqliteFileHarness, mariadbHarness } from '../backends.js';
import { spawnTs } from '../helpers/processes.js';

const ROUNDS = 20;

/** Run the worker until it has printed `after` ids, plus a random few milliseconds, then SIGKILL it. */
async function killRound(url: string, tag: string, after: number): Promise<number[]> {
  const child: ChildProcessWithoutNullStreams = spawnTs('../reliability/workers/append-forever.ts', [
    url,
    'durable',
    tag,
  ]);
  const printed: number[] = [];
  let buffer = '';
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  await new Promise<void>((resolve, reject) => {
    child.stdout.on('data', (d: Buffer) => {
      buffer += d.toString();
      const lines = buffer.split('\n');
      buffer = lines.pop()!;
      for (const line of lines) {
        if (/^\d+$/.test(line)) printed.push(Number(line));
        if (printed.length >= after) resolve();
      }
    });
    child.once('exit', () => reject(new Error(`worker exited before it was killed: ${stderr}`)));
  });
  await new Promise((r) => setTimeout(r, Math.random() * 15));
  child.kill('SIGKILL');
  await exited;
  return printed;
}

const harnesses: ContractHarness[] = [sqliteFileHarness(), await postgresHarness(), await mariadbHarness()];
for (const h of harnesses) {
  const available = harnessAvailable(h);
  describe.skipIf(!available)(
    `durability under SIGKILL [${h.name}]${available ? '' : ` (skipped: ${h.unavailable})`}`,
    () => {
      afterAll(() => h.cleanup());

      it(`keeps every acknowledged append across ${ROUNDS} kills, with counters equal to rows and intact indexes`, async () => {
        const url = await h.freshUrl();
        const setup = await openStore(url);
        await setup.createSession('durable', 'cli');
        await setup.close();

        const acknowledged: number[] = [];
        for (let round = 0; round < ROUNDS; round++) {
          acknowledged.push(...(await killRound(url, `r${round}`, 1 + Math.floor(Math.random() * 40))));
        }

        const store = await openStore(url);
        try {
          const messages = await store.getMessages('durable');
          const ids = new Set(messages.map((m) => m.id));
          expect(acknowledged.filter((id) => !ids.has(id))).toEqual([]);
          expect(new Set(acknowledged).size).toBe(acknowledged.length);
          const session = (await store.getSession('durable'))!;
          expect(session.messageCount).toBe(messages.length);
          expect(session.toolCallCount).toBe(messages.filter((m) => m.toolCalls !== null).length);
          // Every stored message is searchable by its own unique token (the index followed every commit).
          const sample = store.search.unavailable === undefined ? messages.filter((_, i) => i % 25 === 0) : [];
          for (const m of sample) {
            const token = (m.content as string).split(' ').pop()!;
            expect((await store.searchMessages(`"${token}"`, { limit: 5 })).map((x) => x.id)).toContain(m.id);
          }
          if (store.dialect === 'sqlite') {
            const client = (store.backend as SqliteBackend).client;
            expect(client.pragma('integrity_check', { simple: true })).toBe('ok');
            for (const fts of ['messages_fts', 'messages_fts_trigram']) {
              expect(() => client.prepare(`INSERT INTO ${fts}(${fts}) VALUES ('integrity-check')`).run()).not.toThrow();
            }
          } else if (store.dialect === 'mysql') {
            // InnoDB's own check of the tables, and the search index followed every committed row: each message
            // is merged into the blocks or tokenized in the recent segment, none left queued after the searches.
            await (store.backend as MysqlBackend).withConnection(async (c) => {
              const [checked] = await c.query(
                'CHECK TABLE messages, sessions, message_search_blocks, message_search_recent',
              );
              for (const r of checked as Array<{ Msg_type: string; Msg_text: string }>) {
                if (r.Msg_type === 'status') expect(r.Msg_text).toBe('OK');
              }
              const [[row]] = (await c.query(
                `SELECT (SELECT COUNT(*) FROM messages WHERE session_id = 'durable') AS n,
                   (SELECT COUNT(*) FROM messages) AS total,
                   (SELECT messages FROM message_search_merged WHERE kind = 0) + (SELECT COUNT(*) FROM message_search_recent) AS indexed,
                   (SELECT COUNT(*) FROM message_search_recent WHERE queued) AS queued`,
              )) as unknown as [Array<Record<string, string | number>>];
              expect(Number(row!.n)).toBe(messages.length);
              expect([Number(row!.indexed), Number(row!.queued)]).toEqual([Number(row!.total), 0]);
            });
          } else {
            const db = (store.backend as PgBackend).db;
            const [row] = (await db.execute(
              sql`SELECT COUNT(*)::int AS n FROM messages WHERE session_id = 'durable'`,
            )) as unknown as Array<{ n: number }>;
            expect(row!.n).toBe(messages.length);
          }
        } finally {
          await store.close();
        }
      }, 300_000);
    },
  );
}
