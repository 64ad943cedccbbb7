/**
 * Child process that holds a store open: open it, write the session named by argv[3], print "ready <pid>",
 * and close when a line arrives on stdin (then print "closed" and exit). Killed instead, it leaves its lock.
 */
import { openStore } from '../../src/index.js';

const [url, sessionId] = process.argv.slice(2);
if (!url || !sessionId) throw new Error('usage: hold-store-worker <store-url> <session-id>');

const store = await openStore(url);
await store.createSession(sessionId, 'worker');
process.stdout.write(`ready ${process.pid}\n`);
await new Promise<void>((resolve) => process.stdin.once('data', () => resolve()));
process.stdin.destroy(); // nothing more to read: let the process end
await store.close();
process.stdout.write('closed\n');
