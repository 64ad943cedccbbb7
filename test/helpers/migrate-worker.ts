/**
 * Child process for the concurrent-migration test: open the store without migrating, say "ready", wait for
 * "go" on stdin so that all workers start together, migrate, and print the report as JSON.
 */
import { openStore } from '../../src/index.js';

const url = process.argv[2];
if (!url) throw new Error('usage: migrate-worker <store-url>');

// An optional second argument: the Postgres schema the store lives in.
const schema = process.argv[3];
const store = await openStore(url, {
  migrate: false,
  writeDeadlineMs: 60_000,
  busyTimeoutMs: 200,
  ...(schema ? { schema } : {}),
});
process.stdout.write('ready\n');
await new Promise<void>((resolve) => process.stdin.once('data', () => resolve()));
try {
  const report = await store.migrate();
  process.stdout.write(`${JSON.stringify({ ok: true, report })}\n`);
} catch (error) {
  process.stdout.write(`${JSON.stringify({ ok: false, error: String(error) })}\n`);
  process.exitCode = 1;
} finally {
  await store.close();
}
