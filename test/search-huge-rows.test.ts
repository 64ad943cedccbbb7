/**
 * Bounded cost per hit: a store holding twenty 1 MB pasted logs, each containing the query word hundreds of
 * times, answers a search quickly in every sort mode and never blocks the event loop for long. FTS5's
 * snippet() costs more than linearly in the matches inside one row, so it may only ever see small rows;
 * huge rows get a snippet from a bounded window around their first match (and so does Postgres).
 * The bounds are the issue's (answer < 100 ms, no stall over 50 ms); each is the best of three runs.
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SessionStore } from '../src/index.js';
import {
  type Harness,
  pgliteHarness,
  postgresHarness,
  reportAvailability,
  sqliteFileHarness,
  sqliteMemoryHarness,
} from './backends.js';

const harnesses: Harness[] = [sqliteFileHarness(), sqliteMemoryHarness(), pgliteHarness(), await postgresHarness()];
const HUGE_ROWS = 20;
const MiB = 1024 * 1024;

/** A 1 MB log in which "timeout" appears on every fourth line (hundreds of times). */
function pastedLog(n: number): string {
  const lines: string[] = [];
  let size = 0;
  for (let i = 0; size < MiB; i++) {
    const line =
      i % 4 === 0
        ? `2026-11-${String(1 + (i % 28)).padStart(2, '0')} 12:${String(i % 60).padStart(2, '0')} WARN upstream timeout after 30s on request ${n}-${i}, retrying with backoff`
        : `2026-11-${String(1 + (i % 28)).padStart(2, '0')} 12:${String(i % 60).padStart(2, '0')} INFO served request ${n}-${i} in ${i % 97} ms from cache shard ${i % 13}`;
    lines.push(line);
    size += line.length + 1;
  }
  return lines.join('\n');
}

for (const h of harnesses) {
  const available = reportAvailability(h);
  describe.skipIf(!available)(
    `search over 1 MB rows [${h.name}]${available ? '' : ` (skipped: ${h.unavailable})`}`,
    () => {
      let store: SessionStore;
      beforeAll(async () => {
        store = await h.open();
        await store.createSession('logs', 'cli');
        await store.createSession('chat', 'telegram');
        for (let i = 0; i < 50; i++)
          await store.appendMessage(
            'chat',
            i % 2 ? 'user' : 'assistant',
            `the deploy hit a timeout again, message ${i}`,
          );
        for (let i = 0; i < HUGE_ROWS; i++)
          await store.appendMessage('logs', 'tool', pastedLog(i), { toolName: 'terminal' });
      }, 300_000);
      afterAll(async () => {
        await store?.close();
        await h.cleanup();
      });

      it.each(['relevance', 'newest', 'oldest'] as const)(
        'answers quickly and keeps the event loop free (%s)',
        async (sort) => {
          await store.searchMessages('timeout', { sort, limit: 20 }); // warm caches and prepared statements
          // Best of three: on a shared 2-core machine running other test files, noise only ever adds time.
          let elapsed = Infinity;
          let stallMs = Infinity;
          for (let run = 0; run < 3; run++) {
            const loop = monitorEventLoopDelay({ resolution: 1 });
            loop.enable();
            const started = performance.now();
            const hits = await store.searchMessages('timeout', { sort, limit: 80 });
            elapsed = Math.min(elapsed, performance.now() - started);
            loop.disable();
            stallMs = Math.min(stallMs, loop.max / 1e6);
            expect(hits).toHaveLength(50 + HUGE_ROWS);
            const huge = hits.filter((hit) => hit.sessionId === 'logs');
            expect(huge).toHaveLength(HUGE_ROWS);
            for (const hit of huge) {
              expect(hit.snippet).toContain('>>>timeout<<<');
              expect(hit.snippet!.length).toBeLessThan(1000);
              expect(hit.context.every((c) => [...c.content].length <= 200)).toBe(true);
            }
          }
          console.log(
            `[${h.name}] ${sort}: ${elapsed.toFixed(1)} ms, longest event-loop stall ${stallMs.toFixed(1)} ms`,
          );
          // PGlite runs Postgres inside this process (WASM, several times slower): it is held to 5× the time.
          expect(elapsed).toBeLessThan(h.name === 'pglite' ? 500 : 100);
          expect(stallMs).toBeLessThan(50);
        },
      );
    },
  );
}
