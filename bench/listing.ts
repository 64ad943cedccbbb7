/**
 * listSessionsRich({ limit: 50 }) in both orders (started_at, and Hermes' order_by_last_active) at 2,000 and
 * 100,000 sessions, on SQLite, Postgres and PGlite (2,000 only: building 100,000 there takes minutes). The baseline
 * is Hermes' own listing SQL (spec: list_sessions_rich, its recursive CTE for the activity order) run through the
 * raw driver on the same database in the same run, without the compression-tip projection. Medians of RUNS runs.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import mysql from 'mysql2/promise';
import postgres from 'postgres';
import { epochSecondsToDatetime } from '../src/codecs/time.js';
import { type SessionStore, openStore } from '../src/index.js';
import type { BenchRow } from './append.js';

const RUNS = Number(process.env.BENCH_RUNS ?? 5);
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const T0 = 1_760_000_000.5;
const SOURCES = ['cli', 'telegram', 'discord', 'cron'];

interface SessionSeed {
  id: string;
  source: string;
  parent: string | null;
  startedAt: number;
  endedAt: number | null;
  endReason: string | null;
}
interface MessageSeed {
  sessionId: string;
  role: string;
  content: string;
  timestamp: number;
}

/**
 * n sessions a minute apart: every tenth starts a compression chain (its continuation follows), others are
 * /branch children, delegated children and plain roots, over four sources. Each has a user message and a reply
 * (one message at 100,000); every seventh is resumed much later, so activity order differs from start order.
 */
export function listingFixture(n: number): { sessions: SessionSeed[]; messages: MessageSeed[] } {
  const sessions: SessionSeed[] = [];
  const messages: MessageSeed[] = [];
  const id = (i: number) => `s${String(i).padStart(6, '0')}`;
  for (let i = 0; i < n; i++) {
    const startedAt = T0 + i * 60;
    const kind = i % 10;
    const parent = i > 0 && (kind === 1 || kind === 5 || kind === 7) ? id(i - 1) : null;
    const endsAs = kind === 0 ? 'compression' : kind === 6 ? 'branched' : null;
    sessions.push({
      id: id(i),
      source: SOURCES[i % SOURCES.length]!,
      parent,
      startedAt,
      endedAt: endsAs ? startedAt + 59 : null,
      endReason: endsAs,
    });
    messages.push({
      sessionId: id(i),
      role: 'user',
      content: `deploy the service ${i} with docker`,
      timestamp: startedAt + 1,
    });
    if (n <= 10_000) messages.push({ sessionId: id(i), role: 'assistant', content: 'ok', timestamp: startedAt + 2 });
    if (i % 7 === 0)
      messages.push({
        sessionId: id(i),
        role: 'user',
        content: 'back again',
        timestamp: T0 + ((i * 7919) % n) * 60 + 30,
      });
  }
  return { sessions, messages };
}

const HERMES_PREVIEW = `COALESCE((SELECT SUBSTR(REPLACE(REPLACE(m.content, char(10), ' '), char(13), ' '), 1, 63) FROM messages m
    WHERE m.session_id = s.id AND m.role = 'user' AND m.content IS NOT NULL ORDER BY m.timestamp, m.id LIMIT 1), '') AS _preview_raw,
  COALESCE((SELECT MAX(m2.timestamp) FROM messages m2 WHERE m2.session_id = s.id), s.started_at) AS last_active`;
const HERMES_WHERE = `WHERE (s.parent_session_id IS NULL OR EXISTS (SELECT 1 FROM sessions p WHERE p.id = s.parent_session_id
    AND p.end_reason = 'branched' AND s.started_at >= p.ended_at))`;
/** Hermes' list_sessions_rich, default order. */
const hermesByStart = `SELECT s.*, ${HERMES_PREVIEW} FROM sessions s ${HERMES_WHERE} ORDER BY s.started_at DESC LIMIT 50 OFFSET 0`;
/** Hermes' list_sessions_rich(order_by_last_active=True): the recursive CTE, unbounded as Hermes has it. */
const hermesByActivity = `WITH RECURSIVE chain(root_id, cur_id) AS (
    SELECT s.id, s.id FROM sessions s ${HERMES_WHERE}
    UNION ALL
    SELECT c.root_id, child.id FROM chain c
    JOIN sessions parent ON parent.id = c.cur_id
    JOIN sessions child ON child.parent_session_id = c.cur_id
    WHERE parent.end_reason = 'compression' AND child.started_at >= parent.ended_at
  ),
  chain_max AS (
    SELECT root_id, MAX(COALESCE((SELECT MAX(m.timestamp) FROM messages m WHERE m.session_id = cur_id),
                                 (SELECT started_at FROM sessions ss WHERE ss.id = cur_id))) AS effective_last_active
    FROM chain GROUP BY root_id
  )
  SELECT s.*, ${HERMES_PREVIEW} FROM sessions s LEFT JOIN chain_max cm ON cm.root_id = s.id ${HERMES_WHERE}
  ORDER BY COALESCE(cm.effective_last_active, s.started_at) DESC, s.started_at DESC, s.id DESC LIMIT 50 OFFSET 0`;

/** Milliseconds per call: the median over RUNS runs of `reps` calls each (reps fewer when a call is slow). */
async function time(body: () => Promise<unknown> | unknown): Promise<number> {
  const started = performance.now();
  await body();
  const first = performance.now() - started;
  const reps = Math.max(1, Math.min(50, Math.round(200 / Math.max(first, 0.01))));
  const ms: number[] = [];
  for (let run = 0; run < RUNS; run++) {
    const t = performance.now();
    for (let i = 0; i < reps; i++) await body();
    ms.push((performance.now() - t) / reps);
  }
  return median(ms);
}

async function measure(
  label: string,
  n: number,
  store: SessionStore,
  raw: { byStart: () => Promise<unknown> | unknown; byActivity: (() => Promise<unknown> | unknown) | null },
): Promise<BenchRow[]> {
  const byActivity = raw.byActivity;
  const count = n.toLocaleString('en');
  return [
    {
      case: `${label}: listSessionsRich limit 50 of ${count}`,
      value: await time(() => store.listSessionsRich({ limit: 50 })),
      unit: 'ms',
      baseline: { label: "Hermes' SQL, raw driver", value: await time(raw.byStart) },
    },
    {
      case: `${label}: … orderByLastActive, of ${count}`,
      value: await time(() => store.listSessionsRich({ limit: 50, orderByLastActive: true })),
      unit: 'ms',
      ...(byActivity ? { baseline: { label: "Hermes' CTE, raw driver", value: await time(byActivity) } } : {}),
    },
  ];
}

async function sqliteCase(dir: string, n: number): Promise<BenchRow[]> {
  const file = path.join(dir, `listing-${n}.db`);
  await (await openStore(`sqlite:${file}`)).close();
  const { sessions, messages } = listingFixture(n);
  const db = new Database(file);
  const insertSession = db.prepare(
    'INSERT INTO sessions (id, source, parent_session_id, started_at, ended_at, end_reason) VALUES (?, ?, ?, ?, ?, ?)',
  );
  const insertMessage = db.prepare('INSERT INTO messages (session_id, role, content, timestamp) VALUES (?, ?, ?, ?)');
  db.transaction(() => {
    for (const s of sessions) insertSession.run(s.id, s.source, s.parent, s.startedAt, s.endedAt, s.endReason);
    for (const m of messages) insertMessage.run(m.sessionId, m.role, m.content, m.timestamp);
  })();
  db.close();
  const store = await openStore(`sqlite:${file}`);
  const raw = new Database(file, { readonly: true });
  const byStart = raw.prepare(hermesByStart);
  const byActivity = raw.prepare(hermesByActivity);
  try {
    return await measure('sqlite', n, store, { byStart: () => byStart.all(), byActivity: () => byActivity.all() });
  } finally {
    raw.close();
    await store.close();
  }
}

async function fillPg(sql: postgres.Sql, n: number): Promise<void> {
  const { sessions, messages } = listingFixture(n);
  const time = (t: number | null) => (t === null ? null : new Date(t * 1000).toISOString());
  for (let i = 0; i < sessions.length; i += 5000) {
    const rows = sessions.slice(i, i + 5000).map((s) => ({
      id: s.id,
      source: s.source,
      parent_session_id: s.parent,
      started_at: time(s.startedAt),
      ended_at: time(s.endedAt),
      end_reason: s.endReason,
    }));
    await sql`INSERT INTO sessions ${sql(rows)}`;
  }
  for (let i = 0; i < messages.length; i += 5000) {
    const rows = messages
      .slice(i, i + 5000)
      .map((m) => ({ session_id: m.sessionId, role: m.role, content: m.content, timestamp: time(m.timestamp) }));
    await sql`INSERT INTO messages ${sql(rows)}`;
  }
}

async function postgresCase(adminUrl: string, n: number): Promise<BenchRow[]> {
  const admin = postgres(adminUrl, { max: 1, onnotice: () => {} });
  const name = `hsdb_listing_bench_${Date.now()}`;
  await admin.unsafe(`CREATE DATABASE "${name}"`);
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  try {
    await (await openStore(url.toString())).close();
    const sql = postgres(url.toString(), { max: 4, onnotice: () => {} });
    await fillPg(sql, n);
    await sql`VACUUM ANALYZE`;
    const store = await openStore(url.toString());
    try {
      // Hermes' SQL as SQLite runs it: only the id comparison needs byte order to match.
      return await measure('postgres', n, store, {
        byStart: () => sql.unsafe(hermesByStart.replace(/char\((\d+)\)/g, 'chr($1)')),
        byActivity: () =>
          sql.unsafe(
            hermesByActivity.replace(/char\((\d+)\)/g, 'chr($1)').replace('s.id DESC', 's.id COLLATE "C" DESC'),
          ),
      });
    } finally {
      await sql.end();
      await store.close();
    }
  } finally {
    await admin.unsafe(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
    await admin.end();
  }
}

/** Hermes' activity CTE on MariaDB compares every session with every chain: past this many sessions it is not timed. */
const MARIADB_CTE_MAX_SESSIONS = 10_000;

async function mariadbCase(adminUrl: string, n: number): Promise<BenchRow[]> {
  const admin = await mysql.createConnection({ uri: adminUrl });
  const name = `hsdb_listing_bench_${Date.now()}`;
  await admin.query(`CREATE DATABASE \`${name}\``);
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  try {
    await (await openStore(url.toString())).close();
    const raw = await mysql.createConnection({ uri: url.toString(), charset: 'utf8mb4' });
    try {
      // Raw multi-row inserts: session_activity is kept by migration 0006's triggers as they go.
      const { sessions, messages } = listingFixture(n);
      const time = (t: number | null) => (t === null ? null : epochSecondsToDatetime(t));
      for (let i = 0; i < sessions.length; i += 2000)
        await raw.query(
          'INSERT INTO sessions (id, source, parent_session_id, started_at, ended_at, end_reason) VALUES ?',
          [
            sessions
              .slice(i, i + 2000)
              .map((s) => [s.id, s.source, s.parent, time(s.startedAt), time(s.endedAt), s.endReason]),
          ],
        );
      for (let i = 0; i < messages.length; i += 2000)
        await raw.query('INSERT INTO messages (session_id, role, content, timestamp) VALUES ?', [
          messages.slice(i, i + 2000).map((m) => [m.sessionId, m.role, m.content, time(m.timestamp)]),
        ]);
      await raw.query('ANALYZE TABLE sessions, messages, session_activity');
      const store = await openStore(url.toString());
      try {
        return await measure('mariadb', n, store, {
          byStart: () => raw.query(hermesByStart),
          byActivity: n > MARIADB_CTE_MAX_SESSIONS ? null : () => raw.query(hermesByActivity),
        });
      } finally {
        await store.close();
      }
    } finally {
      await raw.end();
    }
  } finally {
    await admin.query(`DROP DATABASE IF EXISTS \`${name}\``);
    await admin.end();
  }
}

async function pgliteCase(n: number): Promise<BenchRow[]> {
  const store = await openStore('pglite:memory');
  try {
    const { sessions, messages } = listingFixture(n);
    // Through the store (PGlite has no second client to fill it with), in start order, each ended before the next
    // starts so that continuations and branches qualify; the late messages last.
    const late = messages.filter((m) => m.content === 'back again');
    const bySession = new Map<string, MessageSeed[]>();
    for (const m of messages)
      if (m.content !== 'back again') bySession.set(m.sessionId, [...(bySession.get(m.sessionId) ?? []), m]);
    for (const s of sessions) {
      await store.createSession(s.id, s.source, { parentSessionId: s.parent });
      for (const m of bySession.get(s.id) ?? []) await store.appendMessage(m.sessionId, m.role, m.content);
      if (s.endReason) await store.endSession(s.id, s.endReason);
    }
    for (const m of late) await store.appendMessage(m.sessionId, m.role, m.content);
    const none = () => null;
    const rows = await measure('pglite', n, store, { byStart: none, byActivity: none });
    return rows.map(({ baseline: _, ...row }) => row);
  } finally {
    await store.close();
  }
}

export async function benchListing(adminUrl: string): Promise<{ rows: BenchRow[]; notes: string[] }> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hsdb-listing-bench-'));
  const sizes = (process.env.BENCH_LISTING_SIZES ?? '2000,100000').split(',').map(Number);
  const rows: BenchRow[] = [];
  const notes: string[] = [];
  try {
    for (const n of sizes) rows.push(...(await sqliteCase(dir, n)));
    try {
      for (const n of sizes) rows.push(...(await postgresCase(adminUrl, n)));
    } catch (error) {
      notes.push(`postgres listing skipped: ${error instanceof Error ? error.message : String(error)}`);
    }
    const mysqlUrl = process.env.MYSQL_URL ?? 'mysql://root@127.0.0.1:3306/test';
    try {
      for (const n of sizes) rows.push(...(await mariadbCase(mysqlUrl, n)));
    } catch (error) {
      notes.push(`mariadb listing skipped: ${error instanceof Error ? error.message : String(error)}`);
    }
    rows.push(...(await pgliteCase(Math.min(...sizes))));
    return { rows, notes };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
