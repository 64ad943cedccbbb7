/**
 * Child process for the live-import test: writes a Hermes state.db the way Hermes does (WAL, busy timeout,
 * BEGIN IMMEDIATE per write, a passive checkpoint every few commits) until it is killed. Each commit adds
 * one message (liveContent(n)) and bumps its session's message_count; a new session every
 * LIVE_MESSAGES_PER_SESSION messages. Prints "ready", then the number of committed messages now and then.
 */
import Database from 'better-sqlite3';
import { LIVE_MESSAGES_PER_SESSION, liveContent, liveSessionId } from '../../helpers/live-hermes.js';

const [file, checkpointEvery] = process.argv.slice(2);
const db = new Database(file!);
db.pragma('journal_mode = WAL');
db.pragma('busy_timeout = 1000');
const newSession = db.prepare("INSERT INTO sessions (id, source, started_at, message_count) VALUES (?, 'live', ?, 0)");
const insert = db.prepare("INSERT INTO messages (session_id, role, content, timestamp) VALUES (?, 'user', ?, ?)");
const bump = db.prepare('UPDATE sessions SET message_count = message_count + 1 WHERE id = ?');
const append = db.transaction((n: number) => {
  const at = 1_900_000_000 + n / 1000;
  if (n % LIVE_MESSAGES_PER_SESSION === 0) newSession.run(liveSessionId(n), at);
  insert.run(liveSessionId(n), liveContent(n), at);
  bump.run(liveSessionId(n));
});

process.stdout.write('ready\n');
let n = 0;
for (;;) {
  // A short burst of commits, then one event-loop turn (so stdout drains and a kill lands promptly).
  for (let i = 0; i < 20; i++, n++) {
    append.immediate(n);
    if (n % Number(checkpointEvery ?? 50) === 0) db.pragma('wal_checkpoint(PASSIVE)');
  }
  process.stdout.write(`${n}\n`);
  await new Promise((resolve) => setImmediate(resolve));
}
