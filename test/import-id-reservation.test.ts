/**
 * An append to the target store while an import runs must never take one of the source's message ids: the
 * import inserts with the source's ids and skips an id already present (that is how it resumes), so the
 * source's message with that id would be lost. The transfer reserves the source's ids before its first page.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { buildHermesFile } from '../bench/import.js';
import { HermesFileSource, type RowSource } from '../src/index.js';
import { transferRows } from '../src/transfer/pipeline.js';
import { pgliteHarness, postgresHarness, reportAvailability, sqliteFileHarness } from './backends.js';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hsdb-reserve-'));
const source = path.join(dir, 'state.db');
// Two import pages (5,000 each), so the append lands between the reservation and the last page.
const MESSAGES = 7_000;
buildHermesFile(source, MESSAGES);

const harnesses = [sqliteFileHarness(), pgliteHarness(), await postgresHarness()];
afterAll(async () => {
  for (const h of harnesses) await h.cleanup();
  fs.rmSync(dir, { recursive: true, force: true });
});

for (const h of harnesses) {
  const available = reportAvailability(h);
  describe.skipIf(!available)(
    `import id reservation [${h.name}]${available ? '' : ` (skipped: ${h.unavailable})`}`,
    () => {
      it('an append during the import takes an id above the source ids, and every source message is imported', async () => {
        const store = await h.open();
        const snapshot = await HermesFileSource.open(source);
        try {
          await store.createSession('live', 'cli');
          const appended: number[] = [];
          // Appends land after the reservation: one before the first page is written, one between pages.
          const appending: RowSource = {
            label: snapshot.label,
            sessions: () => snapshot.sessions(),
            messageCount: () => snapshot.messageCount(),
            maxMessageId: () => snapshot.maxMessageId(),
            meta: () => snapshot.meta(),
            topicModes: () => snapshot.topicModes(),
            topicBindings: () => snapshot.topicBindings(),
            messagePage: async (after, limit) => {
              appended.push(await store.appendMessage('live', 'user', `appended during the import after ${after}`));
              return snapshot.messagePage(after, limit);
            },
          };
          const sourceMax = (await snapshot.maxMessageId())!;
          await transferRows(appending, store, { onConflict: 'keep-target' });

          expect(appended.length).toBeGreaterThanOrEqual(2);
          for (const id of appended) expect(id).toBeGreaterThan(sourceMax);
          // Every source message is there under its own id, with its own content.
          const imported = await store.bulkRead.messagePage(0, MESSAGES + 10);
          const fromSource = imported.filter((m) => Number(m.id) <= sourceMax);
          expect(fromSource).toHaveLength(MESSAGES);
          const first = (await snapshot.messagePage(0, 1))[0]!;
          expect(fromSource[0]!.content).toBe(first.content);
          // The next append still goes above everything.
          const after = await store.appendMessage('live', 'user', 'after the import');
          expect(after).toBeGreaterThan(Math.max(...appended));
        } finally {
          await snapshot.close();
          await store.close();
        }
      }, 120_000);
    },
  );
}
