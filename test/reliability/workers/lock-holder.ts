/**
 * Child process: on "lock", take SQLite's write lock (BEGIN IMMEDIATE) on the file, print "locked", hold it
 * for the given milliseconds, COMMIT, print "released" and exit. Another writer in the meantime meets
 * SQLITE_BUSY and waits, as it would behind any other process writing.
 */
import Database from 'better-sqlite3';

const [file, holdMs] = process.argv.slice(2);
const db = new Database(file!);
db.pragma('busy_timeout = 5000');
process.stdout.write('ready\n');
process.stdin.on('data', (chunk: Buffer) => {
  if (!chunk.toString().includes('lock')) return;
  db.exec('BEGIN IMMEDIATE');
  process.stdout.write('locked\n');
  setTimeout(() => {
    db.exec('COMMIT');
    db.close();
    process.stdout.write('released\n');
    process.exit(0);
  }, Number(holdMs));
});
