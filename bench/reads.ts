/**
 * Message reads against the raw drivers, on every backend, in the same run: a 5-session compression chain
 * (the tip holds 250 messages, the chain 1,000 in all, as in issue 13's Hermes figures) read as a
 * conversation with and without ancestors, getMessages of the tip, and getSession, among 2,000 other
 * sessions. The baselines run the store's statements through the bare driver (see MESSAGE_COLUMNS).
 * Medians over RUNS runs, the cases interleaved; figures, never assertions.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import postgres from 'postgres';
import { type SessionStore, openStore } from '../src/index.js';
import type { BenchRow } from './append.js';

const RUNS = Number(process.env.BENCH_RUNS ?? 5);
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/** Messages per session of the chain, root first: 1,000 in all, 250 in the tip. */
const CHAIN = [188, 188, 187, 187, 250];
const TIP = `chain-${CHAIN.length - 1}`;
const OTHER_SESSIONS = 2000;

const text = (i: number) => `benchmark message ${i}: deploy the service with docker compose and check the nginx logs`;

async function fill(store: SessionStore): Promise<void> {
  let parent: string | null = null;
  for (const [k, size] of CHAIN.entries()) {
    const id = `chain-${k}`;
    await store.createSession(id, 'cli', { parentSessionId: parent });
    await store.appendMessages(
      id,
      Array.from({ length: size }, (_, i) => ({ role: i % 2 ? 'assistant' : 'user', content: text(i) })),
    );
    if (k < CHAIN.length - 1) await store.endSession(id, 'compression');
    parent = id;
  }
  for (let s = 0; s < OTHER_SESSIONS; s++) {
    await store.createSession(`list-${s}`, s % 3 ? 'cli' : 'telegram');
    await store.appendMessages(`list-${s}`, [
      { role: 'user', content: text(s) },
      { role: 'assistant', content: 'ok' },
    ]);
  }
}

/**
 * What the raw baselines run: the store's statements (sql/lineage.ts ancestorMessages, the tip's replay,
 * getMessages' SELECT), their rows as arrays of values, the cheapest form each driver has.
 */
const MESSAGE_COLUMNS =
  'id, session_id, role, content, tool_call_id, tool_calls, tool_name, timestamp, token_count, finish_reason, ' +
  'reasoning, reasoning_content, reasoning_details, codex_reasoning_items, codex_message_items';
const PG_MESSAGE_COLUMNS = `${MESSAGE_COLUMNS}, content_json`;
/** What a conversation replay selects (src/sql/replay-columns.ts). */
const REPLAY_COLUMNS =
  'role, content, tool_call_id, tool_calls, tool_name, finish_reason, reasoning, reasoning_content, ' +
  'reasoning_details, codex_reasoning_items, codex_message_items';
/** Postgres packs the replay columns after role and content into one JSON array (sql/replay-columns.ts). */
const PG_RARE_REPLAY_COLUMNS = `${REPLAY_COLUMNS.replace('role, content, ', '')}, content_json`.split(', ');
const PG_REPLAY_COLUMNS =
  `role, content, CASE WHEN ${PG_RARE_REPLAY_COLUMNS.map((c) => `${c} IS NULL`).join(' AND ')} ` +
  `THEN NULL ELSE json_build_array(${PG_RARE_REPLAY_COLUMNS.join(', ')}) END`;
const LINEAGE = `WITH RECURSIVE walk(id, parent, depth) AS (
    SELECT $1::text, (SELECT s.parent_session_id FROM sessions s WHERE s.id = $1::text), 0
    UNION ALL
    SELECT s.id, s.parent_session_id, w.depth + 1 FROM walk w JOIN sessions s ON s.id = w.parent WHERE w.depth < 100
  )`;
const SQLITE_CHAIN = `${LINEAGE.replaceAll('$1::text', '?')}
  SELECT ${REPLAY_COLUMNS} FROM messages WHERE session_id IN (SELECT id FROM walk) ORDER BY id`;
const PG_CHAIN = `${LINEAGE}
  SELECT ${PG_REPLAY_COLUMNS} FROM messages WHERE session_id = ANY(ARRAY(SELECT id FROM walk)) ORDER BY id`;
const tipMessages = (columns: string) => `SELECT ${columns} FROM messages WHERE session_id = $1::text ORDER BY id`;

/** Interleave the cases round by round so that a noisy neighbour slows them all alike; median ms per call. */
async function timeAll(cases: Record<string, { reps: number; body: () => unknown }>): Promise<Record<string, number>> {
  const samples: Record<string, number[]> = {};
  for (const c of Object.values(cases)) for (let i = 0; i < Math.max(5, c.reps / 10); i++) await c.body(); // warm up
  for (let run = 0; run < RUNS; run++) {
    for (const [name, c] of Object.entries(cases)) {
      const started = performance.now();
      for (let i = 0; i < c.reps; i++) await c.body();
      samples[name] = [...(samples[name] ?? []), (performance.now() - started) / c.reps];
    }
  }
  return Object.fromEntries(Object.entries(samples).map(([k, xs]) => [k, median(xs)]));
}

type RawReads = { withAncestors: () => unknown; tipReplay: () => unknown; tip: () => unknown; session: () => unknown };

async function measure(label: string, store: SessionStore, raw: RawReads): Promise<BenchRow[]> {
  const t = await timeAll({
    conversation: { reps: 40, body: () => store.getMessagesAsConversation(TIP, { includeAncestors: true }) },
    rawConversation: { reps: 40, body: raw.withAncestors },
    tip: { reps: 150, body: () => store.getMessagesAsConversation(TIP, { includeAncestors: false }) },
    rawTipReplay: { reps: 150, body: raw.tipReplay },
    messages: { reps: 150, body: () => store.getMessages(TIP) },
    rawTip: { reps: 150, body: raw.tip },
    session: { reps: 1000, body: () => store.getSession('list-77') },
    rawSession: { reps: 1000, body: raw.session },
  });
  const rawLabel = label === 'sqlite' ? 'better-sqlite3' : label === 'pglite' ? 'PGlite' : 'postgres.js';
  const same = `${rawLabel}, same SQL`;
  return [
    {
      case: `${label}: getMessagesAsConversation, 4 ancestors, 1,000 msgs`,
      value: t.conversation!,
      unit: 'ms',
      baseline: { label: same, value: t.rawConversation! },
    },
    {
      case: `${label}: getMessagesAsConversation, tip only, 250 msgs`,
      value: t.tip!,
      unit: 'ms',
      baseline: { label: same, value: t.rawTipReplay! },
    },
    {
      case: `${label}: getMessages, 250 msgs`,
      value: t.messages!,
      unit: 'ms',
      baseline: { label: same, value: t.rawTip! },
    },
    {
      case: `${label}: getSession`,
      value: t.session!,
      unit: 'ms',
      baseline: { label: `${rawLabel}, by id`, value: t.rawSession! },
    },
  ];
}

async function sqliteReads(dir: string): Promise<BenchRow[]> {
  const file = path.join(dir, 'reads.db');
  const store = await openStore(`sqlite:${file}`);
  await fill(store);
  const db = new Database(file, { readonly: true });
  const chain = db.prepare(SQLITE_CHAIN).raw(true);
  const tip = db.prepare(tipMessages(MESSAGE_COLUMNS).replace('$1::text', '?')).raw(true);
  const tipReplay = db.prepare(tipMessages(REPLAY_COLUMNS).replace('$1::text', '?')).raw(true);
  const session = db.prepare('SELECT * FROM sessions WHERE id = ?');
  try {
    return await measure('sqlite', store, {
      withAncestors: () => chain.all(TIP, TIP),
      tipReplay: () => tipReplay.all(TIP),
      tip: () => tip.all(TIP),
      session: () => session.get('list-77'),
    });
  } finally {
    db.close();
    await store.close();
  }
}

async function pgliteReads(dir: string): Promise<BenchRow[]> {
  const store = await openStore(`pglite:${path.join(dir, 'reads-pglite')}`);
  await fill(store);
  // The store's own PGlite instance (one per data directory): the raw queries go straight to it.
  if (store.dialect !== 'pg') throw new Error('expected a PGlite store');
  const client = (store.backend.db as unknown as { $client: import('@electric-sql/pglite').PGlite }).$client;
  const arrays = { rowMode: 'array' } as const;
  try {
    return await measure('pglite', store, {
      withAncestors: () => client.query(PG_CHAIN, [TIP], arrays),
      tipReplay: () => client.query(tipMessages(PG_REPLAY_COLUMNS), [TIP], arrays),
      tip: () => client.query(tipMessages(PG_MESSAGE_COLUMNS), [TIP], arrays),
      session: () => client.query('SELECT * FROM sessions WHERE id = $1', ['list-77']),
    });
  } finally {
    await store.close();
  }
}

async function postgresReads(adminUrl: string): Promise<{ rows: BenchRow[]; note?: string }> {
  const admin = postgres(adminUrl, { max: 1, onnotice: () => {}, connect_timeout: 5 });
  try {
    await admin`select 1`;
  } catch {
    await admin.end();
    return { rows: [], note: 'Postgres read bench skipped: server unreachable' };
  }
  const name = `hsdb_reads_bench_${Date.now()}`;
  await admin.unsafe(`CREATE DATABASE "${name}"`);
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  try {
    const store = await openStore(url.toString());
    await fill(store);
    const sql = postgres(url.toString(), { max: 10, onnotice: () => {} });
    try {
      return {
        rows: await measure('postgres', store, {
          withAncestors: () => sql.unsafe(PG_CHAIN, [TIP], { prepare: true }).values(),
          tipReplay: () => sql.unsafe(tipMessages(PG_REPLAY_COLUMNS), [TIP], { prepare: true }).values(),
          tip: () => sql.unsafe(tipMessages(PG_MESSAGE_COLUMNS), [TIP], { prepare: true }).values(),
          session: () => sql`SELECT * FROM sessions WHERE id = ${'list-77'}`,
        }),
      };
    } finally {
      await sql.end();
      await store.close();
    }
  } finally {
    await admin.unsafe(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
    await admin.end();
  }
}

export async function benchReads(adminUrl: string): Promise<{ rows: BenchRow[]; notes: string[] }> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hsdb-reads-bench-'));
  try {
    const rows = await sqliteReads(dir);
    const pg = await postgresReads(adminUrl);
    rows.push(...pg.rows, ...(await pgliteReads(dir)));
    const notes = pg.note ? [pg.note] : [];
    // Issue 13's target: Postgres within 1.5× of SQLite on each read.
    for (const r of rows) {
      if (!r.case.startsWith('postgres: ') && !r.case.startsWith('pglite: ')) continue;
      const sqlite = rows.find((s) => s.case === r.case.replace(/^\w+: /, 'sqlite: '));
      if (sqlite) notes.push(`${r.case}: ${(r.value / sqlite.value).toFixed(2)}× SQLite`);
    }
    return { rows, notes };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
