/**
 * Write and read costs against the raw drivers, on the same schema and settings, in the same run:
 * appendMessage one call per transaction (SQLite FULL and NORMAL, Postgres), concurrent appenders (group
 * commit), appendMessages batches, and a few reads. Medians over RUNS runs; figures, never assertions.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import postgres from 'postgres';
import { PGlite } from '@electric-sql/pglite';
import { pg_trgm } from '@electric-sql/pglite/contrib/pg_trgm';
import { pythonJsonDumps } from '../src/codecs/python-json.js';
import { type SessionStore, openStore } from '../src/index.js';
import { pgAppendStatements } from '../src/db/pg/append-statement.js';
import { qualifiedNames } from '../src/sql/tables.js';

export interface BenchRow {
  case: string;
  /** Operations per second (writes), or milliseconds per call (reads). */
  value: number;
  unit: 'msg/s' | 'ms';
  baseline?: { label: string; value: number };
}

const RUNS = Number(process.env.BENCH_RUNS ?? 5);
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function rate(n: number, body: (i: number) => Promise<unknown> | unknown): Promise<number> {
  const started = performance.now();
  for (let i = 0; i < n; i++) await body(i);
  return n / ((performance.now() - started) / 1000);
}

const TOOL_CALLS = JSON.stringify([
  { id: 'call_1', type: 'function', function: { name: 'terminal', arguments: '{"command": "ls"}' } },
]);
// What appendMessage stores for those tool calls (Python's json.dumps spacing): raw SQLite writes the same bytes.
const STORED_TOOL_CALLS = pythonJsonDumps(JSON.parse(TOOL_CALLS));
const text = (i: number) => `benchmark message ${i}: deploy the service with docker compose and check the nginx logs`;

/** Raw better-sqlite3 doing what appendMessage does: counters and row in one BEGIN IMMEDIATE transaction. */
function rawSqliteAppender(file: string, synchronous: string) {
  const db = new Database(file);
  db.pragma('busy_timeout = 5000');
  db.pragma(`synchronous = ${synchronous}`);
  db.pragma('foreign_keys = ON');
  const bump = db.prepare(
    'UPDATE sessions SET message_count = COALESCE(message_count, 0) + 1, tool_call_count = COALESCE(tool_call_count, 0) + ? WHERE id = ? RETURNING id',
  );
  const insert =
    db.prepare(`INSERT INTO messages (session_id, role, tool_call_id, tool_calls, tool_name, timestamp, token_count, finish_reason,
    reasoning, reasoning_content, reasoning_details, codex_reasoning_items, codex_message_items, content)
    VALUES (?, ?, NULL, ?, NULL, ?, NULL, NULL, NULL, NULL, NULL, NULL, NULL, ?) RETURNING id`);
  const one = db.transaction((session: string, i: number) => {
    const calls = i % 4 === 1 ? STORED_TOOL_CALLS : null;
    bump.get(calls ? 1 : 0, session);
    return (insert.get(session, i % 2 ? 'assistant' : 'user', calls, Date.now() / 1000, text(i)) as { id: number }).id;
  });
  // 16 chats, one append each, committed together: what group commit can reach at best.
  const sixteen = db.transaction((sessions: readonly string[], i: number) => {
    for (const session of sessions) one(session, i);
  });
  const many = db.transaction((session: string, from: number, count: number) => {
    for (let i = from; i < from + count; i++) {
      bump.get(0, session);
      insert.get(session, 'user', null, Date.now() / 1000, text(i));
    }
  });
  return {
    append: (s: string, i: number) => one.immediate(s, i),
    appendMany: (s: string, from: number, n: number) => many.immediate(s, from, n),
    appendSixteen: (sessions: readonly string[], i: number) => sixteen.immediate(sessions, i),
    close: () => db.close(),
  };
}

const storeAppend = (store: SessionStore, session: string, i: number) =>
  store.appendMessage(
    session,
    i % 2 ? 'assistant' : 'user',
    text(i),
    i % 4 === 1 ? { toolCalls: JSON.parse(TOOL_CALLS) } : {},
  );

/** Time `a` and `b` in alternating chunks (the order flips every chunk), so drift in disk or CPU speed hits both alike. */
async function interleaved(
  chunks: number,
  a: (chunk: number) => Promise<unknown> | unknown,
  b: (chunk: number) => Promise<unknown> | unknown,
): Promise<[number, number]> {
  let msA = 0;
  let msB = 0;
  const timed = async (body: (chunk: number) => Promise<unknown> | unknown, k: number) => {
    const started = performance.now();
    await body(k);
    return performance.now() - started;
  };
  for (let k = 0; k < chunks; k++) {
    if (k % 2 === 0) {
      msA += await timed(a, k);
      msB += await timed(b, k);
    } else {
      msB += await timed(b, k);
      msA += await timed(a, k);
    }
  }
  return [msA, msB];
}

const CHATS = 16;

async function sqliteWrites(dir: string, synchronous: 'FULL' | 'NORMAL', n: number): Promise<BenchRow[]> {
  const mine: number[] = [];
  const raw: number[] = [];
  const concurrent: number[] = [];
  const rawSixteen: number[] = [];
  const batched: number[] = [];
  const rawBatched: number[] = [];
  const rounds = Math.max(10, Math.floor(n / CHATS / 10) * 10); // appends per chat
  for (let run = 0; run < RUNS; run++) {
    const file = path.join(dir, `append-${synchronous}-${run}.db`);
    const store = await openStore(`sqlite:${file}`, { synchronous });
    await store.createSession('s', 'cli');
    await store.createSession('raw', 'cli');
    const chats = Array.from({ length: CHATS }, (_, c) => `chat-${c}`);
    const rawChats = chats.map((c) => `raw-${c}`);
    for (const c of [...chats, ...rawChats]) await store.createSession(c, 'telegram');
    const r = rawSqliteAppender(file, synchronous);
    // One caller, one transaction per append; 100 appends a chunk, alternating who goes first.
    const chunk = 100;
    const [msMine, msRaw] = await interleaved(
      Math.ceil(n / chunk),
      async (k) => {
        for (let i = k * chunk; i < (k + 1) * chunk; i++) await storeAppend(store, 's', i);
      },
      (k) => {
        for (let i = k * chunk; i < (k + 1) * chunk; i++) r.append('raw', i);
      },
    );
    const ones = Math.ceil(n / chunk) * chunk;
    mine.push(ones / (msMine / 1000));
    raw.push(ones / (msRaw / 1000));
    if (synchronous === 'FULL') {
      // A gateway serving 16 chats: each caller appends to its own session, one append at a time, next to raw
      // better-sqlite3 committing one append to each of 16 sessions per transaction. 10 rounds a chunk.
      const [msConcurrent, msSixteen] = await interleaved(
        rounds / 10,
        (k) =>
          Promise.all(
            chats.map(async (chat) => {
              for (let i = k * 10; i < (k + 1) * 10; i++) await storeAppend(store, chat, i);
            }),
          ),
        (k) => {
          for (let i = k * 10; i < (k + 1) * 10; i++) r.appendSixteen(rawChats, i);
        },
      );
      concurrent.push((rounds * CHATS) / (msConcurrent / 1000));
      rawSixteen.push((rounds * CHATS) / (msSixteen / 1000));
      let started = performance.now();
      for (let i = 0; i < n; i += 50) {
        await store.appendMessages(
          's',
          Array.from({ length: 50 }, (_, k) => ({ role: 'user', content: text(i + k) })),
        );
      }
      batched.push(n / ((performance.now() - started) / 1000));
      started = performance.now();
      for (let i = 0; i < n; i += 50) r.appendMany('raw', i, 50);
      rawBatched.push(n / ((performance.now() - started) / 1000));
    }
    r.close();
    await store.close();
  }
  const rows: BenchRow[] = [
    {
      case: `sqlite ${synchronous}: appendMessage, 1 caller`,
      value: median(mine),
      unit: 'msg/s',
      baseline: { label: 'raw better-sqlite3', value: median(raw) },
    },
  ];
  if (synchronous === 'FULL') {
    rows.push(
      {
        case: 'sqlite FULL: appendMessage, 16 concurrent callers',
        value: median(concurrent),
        unit: 'msg/s',
        baseline: { label: 'raw, 16 appends per tx', value: median(rawSixteen) },
      },
      {
        case: 'sqlite FULL: appendMessage, 16 callers vs 1 caller',
        value: median(concurrent),
        unit: 'msg/s',
        baseline: { label: 'appendMessage, 1 caller', value: median(mine) },
      },
      {
        case: 'sqlite FULL: appendMessages, 50 per call',
        value: median(batched),
        unit: 'msg/s',
        baseline: { label: 'appendMessage, 1 caller', value: median(mine) },
      },
      {
        case: 'sqlite FULL: raw, 50 rows per transaction',
        value: median(rawBatched),
        unit: 'msg/s',
        baseline: { label: 'raw, 1 row per transaction', value: median(raw) },
      },
      ...(await sqliteFloors(dir, n)),
    );
  }
  return rows;
}

/**
 * What bounds group commit, raw better-sqlite3 on a scratch file at FULL: the commit itself (an empty
 * BEGIN IMMEDIATE/COMMIT, which writes nothing to the WAL, and the smallest durable commit: one row updated,
 * one WAL frame and its fsync) and the native cost of one append (counter UPDATE and INSERT, 2,000 in one
 * transaction) with both FTS triggers, with the word index only, and with no trigger.
 */
async function sqliteFloors(dir: string, n: number): Promise<BenchRow[]> {
  const file = path.join(dir, 'floors.db');
  const store = await openStore(`sqlite:${file}`, { synchronous: 'FULL' });
  await store.createSession('raw', 'cli');
  await store.close();
  const r = rawSqliteAppender(file, 'FULL');
  const db = new Database(file);
  db.pragma('synchronous = FULL');
  db.exec('CREATE TABLE tick (n INTEGER); INSERT INTO tick VALUES (0)');
  const begin = db.prepare('BEGIN IMMEDIATE');
  const commit = db.prepare('COMMIT');
  const tick = db.prepare('UPDATE tick SET n = n + 1');
  const perCall = (count: number, body: () => void) => {
    const ms: number[] = [];
    for (let run = 0; run < RUNS; run++) {
      const started = performance.now();
      for (let i = 0; i < count; i++) body();
      ms.push((performance.now() - started) / count);
    }
    return median(ms);
  };
  const empty = perCall(n, () => {
    begin.run();
    commit.run();
  });
  const oneRow = perCall(Math.max(50, n / 10), () => {
    begin.run();
    tick.run();
    commit.run();
  });
  const append = () => perCall(1, () => r.appendMany('raw', 0, 2000)) / 2000;
  const bothFts = append();
  db.exec('DROP TRIGGER messages_fts_trigram_insert');
  const wordFts = append();
  db.exec('DROP TRIGGER messages_fts_insert');
  const noFts = append();
  db.close();
  r.close();
  return [
    { case: 'sqlite FULL floor: empty BEGIN IMMEDIATE/COMMIT', value: empty, unit: 'ms' },
    { case: 'sqlite FULL floor: commit of a one-row UPDATE', value: oneRow, unit: 'ms' },
    { case: 'sqlite native append (in a big tx), both FTS triggers', value: bothFts, unit: 'ms' },
    { case: 'sqlite native append (in a big tx), word FTS only', value: wordFts, unit: 'ms' },
    { case: 'sqlite native append (in a big tx), no FTS trigger', value: noFts, unit: 'ms' },
  ];
}

/** Pool size on both sides: openStore's default poolSize, and the raw postgres.js pool's max. */
const PG_POOL = 10;

/**
 * appendMessage on Postgres against the raw driver sending the very same statement (db/pg/append-statement.ts: one
 * UPDATE … RETURNING feeding INSERT … SELECT, a named prepared statement, bare parameters): one caller, and 16
 * callers at once (raw: 16 concurrent statements over a pool of the same size, each its own commit, grouped by
 * the server; ours may group them itself). PGlite the same way, raw being PGlite's own query().
 */
export async function postgresWrites(adminUrl: string, n: number): Promise<{ rows: BenchRow[]; note?: string }> {
  const admin = postgres(adminUrl, { max: 1, onnotice: () => {}, connect_timeout: 5 });
  try {
    await admin`select 1`;
  } catch {
    await admin.end();
    return { rows: [], note: 'Postgres append bench skipped: server unreachable' };
  }
  const name = `hsdb_append_bench_${Date.now()}`;
  await admin.unsafe(`CREATE DATABASE "${name}"`);
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  try {
    const store = await openStore(url.toString(), { poolSize: PG_POOL });
    const client = postgres(url.toString(), { max: PG_POOL, onnotice: () => {} });
    const rows = await appendPair(
      'postgres',
      'raw postgres.js',
      store,
      (params) => client.unsafe(APPEND_ONE, params as never[], { prepare: true }),
      n,
    );
    await client.end();
    await store.close();
    return { rows };
  } finally {
    await admin.unsafe(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
    await admin.end();
  }
}

/** PGlite in memory: the store adopts an instance, and raw queries go to that same instance. */
export async function pgliteWrites(n: number): Promise<BenchRow[]> {
  const client = new PGlite({ extensions: { pg_trgm } });
  const store = await openStore(client);
  try {
    return await appendPair(
      'pglite',
      'raw PGlite',
      store,
      async (params) => (await client.query(APPEND_ONE, params)).rows,
      n,
    );
  } finally {
    await store.close();
    await client.close();
  }
}

/**
 * MySQL/MariaDB (MYSQL_URL, default the local server): the store against raw mysql2 doing the same work on a
 * pooled connection (START TRANSACTION, the counter UPDATE, the INSERT, COMMIT), both with mysql2's
 * client-side parameters as the store sends them.
 */
export async function mariadbWrites(adminUrl: string, n: number): Promise<{ rows: BenchRow[]; note?: string }> {
  const mysql = await import('mysql2/promise');
  let admin: import('mysql2/promise').Connection;
  try {
    admin = await mysql.createConnection({ uri: adminUrl, connectTimeout: 5000 });
  } catch {
    return { rows: [], note: 'MariaDB append bench skipped: server unreachable' };
  }
  const name = `hsdb_append_bench_${Date.now()}`;
  await admin.query(`CREATE DATABASE \`${name}\``);
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  try {
    const store = await openStore(url.toString(), { poolSize: PG_POOL });
    const pool = mysql.createPool({ uri: url.toString(), connectionLimit: PG_POOL, charset: 'UTF8MB4_BIN' });
    const rows = await appendPair(
      'mariadb',
      'raw mysql2',
      store,
      async (params) => {
        const [calls, session, role, at, content, toolCalls] = params as [
          number,
          string,
          string,
          string,
          string,
          string | null,
        ];
        const c = await pool.getConnection();
        try {
          await c.query('START TRANSACTION');
          const [bumped] = await c.query(
            'UPDATE sessions SET message_count = COALESCE(message_count, 0) + 1, tool_call_count = COALESCE(tool_call_count, 0) + ? WHERE id = ?',
            [calls, session],
          );
          if ((bumped as { affectedRows: number }).affectedRows === 0) {
            await c.query('ROLLBACK');
            return [];
          }
          // The store's own column list and order (sql/messages.ts), NULLs included.
          const [inserted] = await c.query(
            `INSERT INTO messages (session_id, role, tool_call_id, tool_calls, tool_name, timestamp, token_count, finish_reason,
              reasoning, reasoning_content, reasoning_details, codex_reasoning_items, codex_message_items, content)
              VALUES (?, ?, NULL, ?, NULL, ?, NULL, NULL, NULL, NULL, NULL, NULL, NULL, ?)`,
            [session, role, toolCalls, at, content],
          );
          await c.query('COMMIT');
          return [{ id: (inserted as { insertId: number }).insertId }];
        } finally {
          c.release();
        }
      },
      n,
      mysqlRawParams,
    );
    await pool.end();
    await store.close();
    return { rows };
  } finally {
    await admin.query(`DROP DATABASE IF EXISTS \`${name}\``);
    await admin.end();
  }
}

/** The raw mysql2 append's parameters: tool-call count, session, role, time, content, tool calls. */
function mysqlRawParams(session: string, i: number): unknown[] {
  const calls = i % 4 === 1 ? STORED_TOOL_CALLS : null;
  const at = new Date().toISOString().replace('T', ' ').replace('Z', '');
  return [calls ? 1 : 0, session, i % 2 ? 'assistant' : 'user', at, text(i), calls];
}

/** The append statement's text (default schema), as the store sends it. */
const APPEND_ONE = pgAppendStatements(qualifiedNames()).one;

/** The statement's bare parameters as an app would pass them (db/pg/append-statement.ts numbers them). */
function rawAppendParams(session: string, i: number): unknown[] {
  const calls = i % 4 === 1 ? TOOL_CALLS : null;
  const role = i % 2 ? 'assistant' : 'user';
  const now = new Date().toISOString();
  return [
    calls ? 1 : 0,
    session,
    role,
    null,
    calls,
    null,
    now,
    null,
    null,
    null,
    null,
    null,
    null,
    null,
    text(i),
    null,
  ];
}

async function appendPair(
  backend: string,
  rawLabel: string,
  store: SessionStore,
  rawSend: (params: unknown[]) => Promise<unknown[]>,
  n: number,
  rawParams: (session: string, i: number) => unknown[] = rawAppendParams,
): Promise<BenchRow[]> {
  for (const who of ['s', 'raw']) {
    await store.createSession(who, 'cli');
    for (let c = 0; c < 16; c++) await store.createSession(`${who}-${c}`, 'telegram');
  }
  const rawAppend = async (session: string, i: number) => {
    const [row] = await rawSend(rawParams(session, i));
    if (!row) throw new Error(`no session ${session}`);
  };
  const concurrently = async (body: (c: number, i: number) => Promise<unknown>) => {
    const started = performance.now();
    await Promise.all(
      Array.from({ length: 16 }, async (_, c) => {
        for (let i = 0; i < n / 16; i++) await body(c, i);
      }),
    );
    return n / ((performance.now() - started) / 1000);
  };
  const mine: number[] = [];
  const raw: number[] = [];
  const mine16: number[] = [];
  const raw16: number[] = [];
  for (let run = 0; run < RUNS; run++) {
    // Alternate who goes first so neither always meets a colder cache or a fuller WAL.
    const one = [
      async () => raw.push(await rate(n, (i) => rawAppend('raw', i))),
      async () => mine.push(await rate(n, (i) => storeAppend(store, 's', i))),
    ];
    const sixteen = [
      async () => raw16.push(await concurrently((c, i) => rawAppend(`raw-${c}`, i))),
      async () => mine16.push(await concurrently((c, i) => storeAppend(store, `s-${c}`, i))),
    ];
    for (const step of run % 2 === 0 ? one : one.reverse()) await step();
    for (const step of run % 2 === 0 ? sixteen : sixteen.reverse()) await step();
  }
  return [
    {
      case: `${backend}: appendMessage, 1 caller`,
      value: median(mine),
      unit: 'msg/s',
      baseline: { label: `${rawLabel}, same statement`, value: median(raw) },
    },
    {
      case: `${backend}: appendMessage, 16 concurrent callers`,
      value: median(mine16),
      unit: 'msg/s',
      baseline: { label: `${rawLabel}, 16 at once`, value: median(raw16) },
    },
  ];
}

/** Reads on an SQLite file: a 5-session compression chain of 1,000 messages, and 2,000 sessions to list. */
async function sqliteReads(dir: string): Promise<BenchRow[]> {
  const file = path.join(dir, 'reads.db');
  const store = await openStore(`sqlite:${file}`);
  let parent: string | null = null;
  for (let k = 0; k < 5; k++) {
    const id = `chain-${k}`;
    await store.createSession(id, 'cli', { parentSessionId: parent });
    await store.appendMessages(
      id,
      Array.from({ length: 200 }, (_, i) => ({ role: i % 2 ? 'assistant' : 'user', content: text(i) })),
    );
    if (k < 4) await store.endSession(id, 'compression');
    parent = id;
  }
  for (let s = 0; s < 2000; s++) {
    await store.createSession(`list-${s}`, s % 3 ? 'cli' : 'telegram');
    await store.appendMessages(`list-${s}`, [
      { role: 'user', content: text(s) },
      { role: 'assistant', content: 'ok' },
    ]);
  }
  const raw = new Database(file, { readonly: true });
  const getRaw = raw.prepare('SELECT * FROM sessions WHERE id = ?');
  const messagesRaw = raw.prepare('SELECT * FROM messages WHERE session_id = ? ORDER BY id');
  const time = async (reps: number, body: () => Promise<unknown> | unknown) => {
    const ms: number[] = [];
    for (let run = 0; run < RUNS; run++) {
      const started = performance.now();
      for (let i = 0; i < reps; i++) await body();
      ms.push((performance.now() - started) / reps);
    }
    return median(ms);
  };
  const rows: BenchRow[] = [
    {
      case: 'sqlite: getSession',
      value: await time(2000, () => store.getSession('list-77')),
      unit: 'ms',
      baseline: { label: 'raw SELECT by id', value: await time(2000, () => getRaw.get('list-77')) },
    },
    {
      case: 'sqlite: getMessages (200 messages)',
      value: await time(200, () => store.getMessages('chain-4')),
      unit: 'ms',
      baseline: { label: 'raw SELECT … ORDER BY id', value: await time(200, () => messagesRaw.all('chain-4')) },
    },
    {
      case: 'sqlite: getMessagesAsConversation, 4 ancestors, 1,000 msgs',
      value: await time(50, () => store.getMessagesAsConversation('chain-4', { includeAncestors: true })),
      unit: 'ms',
    },
    {
      case: 'sqlite: listSessionsRich, limit 50 of 2,005',
      value: await time(50, () => store.listSessionsRich({ limit: 50 })),
      unit: 'ms',
    },
  ];
  raw.close();
  await store.close();
  return rows;
}

export async function benchAppend(adminUrl: string): Promise<{ rows: BenchRow[]; notes: string[] }> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hsdb-append-bench-'));
  const n = Number(process.env.BENCH_APPENDS ?? 2000);
  try {
    const rows = [...(await sqliteWrites(dir, 'FULL', n)), ...(await sqliteWrites(dir, 'NORMAL', n))];
    const pg = await postgresWrites(adminUrl, Math.round(n / 2));
    rows.push(...pg.rows, ...(await pgliteWrites(Math.round(n / 2))));
    const my = await mariadbWrites(process.env.MYSQL_URL ?? 'mysql://root@127.0.0.1:3306/test', Math.round(n / 2));
    rows.push(...my.rows, ...(await sqliteReads(dir)));
    return { rows, notes: [pg.note, my.note].filter((note): note is string => note !== undefined) };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
