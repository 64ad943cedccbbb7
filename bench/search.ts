/**
 * Search at a heavy user's scale, against Hermes itself: a BENCH_MESSAGES-message (default 200,000)
 * Hermes-format state.db written by examples/hermes-state-db.ts is imported with verification into an
 * SQLite file and into Postgres (when reachable); a few hundred queries of every class are run on both and
 * on the original file through Hermes' own search SQL (the oracle). Per class and backend it prints
 * p50/p95/max latency, the share of queries whose top 20 equals Hermes' top 20 (queries over the rank cap
 * are counted apart), and the longest event-loop stall during the searches. Prints; asserts nothing.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import Database from 'better-sqlite3';
import postgres from 'postgres';
import { writeHermesHistoryStateDb } from '../examples/hermes-state-db.js';
import { type SessionStore, importHermesStateDb, openStore } from '../src/index.js';
import { DEFAULT_RANK_WINDOW } from '../src/repos/search.js';
import { hermesMatchCount, hermesSearch, oracleQueries } from '../test/helpers/hermes-oracle.js';

const MESSAGES = Number(process.env.BENCH_MESSAGES ?? 200_000);
const PER_CLASS = Number(process.env.BENCH_QUERIES_PER_CLASS ?? 20);
const ADMIN_URL = process.env.DATABASE_URL ?? 'postgres://root@127.0.0.1:5432/test';

export interface Row {
  backend: string;
  case: string;
  queries: number;
  p50: number;
  p95: number;
  max: number;
  hits: number;
  /** Queries under the cap whose top 20 equals Hermes' (ids and order). */
  sameTop20: number;
  underCap: number;
  stallMs: number;
}

const percentile = (xs: number[], p: number) => {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] ?? 0;
};

type Query = { cls: string; query: string; sort?: 'newest' | 'oldest'; expected: number[] | null };

export function buildQueries(hermes: Database.Database): Query[] {
  const out: Query[] = [];
  const add = (cls: string, query: string, sort?: 'newest' | 'oldest') => {
    const underCap = sort !== undefined || hermesMatchCount(hermes, query) <= DEFAULT_RANK_WINDOW;
    out.push({
      cls,
      query,
      sort,
      expected: underCap ? hermesSearch(hermes, query, { sort: sort ?? null, limit: 20 }).map((h) => h.id) : null,
    });
  };
  const generated = oracleQueries(hermes, PER_CLASS, 11);
  for (const { cls, query } of generated) add(cls, query);
  for (const { cls, query } of generated.filter((_, i) => i % 4 === 0))
    add(`${cls}, newest`.replace(/^.*, newest$/, 'any class, newest'), query, 'newest');
  for (let i = 0; i < PER_CLASS; i++) add('prefix the*', 'the*');
  // The short-CJK worst case: a term that is nowhere.
  for (const term of ['龘靐', '齉', '爨龘', '靐']) for (let i = 0; i < PER_CLASS / 4; i++) add('CJK absent', term);
  return out;
}

export async function measure(name: string, store: SessionStore, queries: Query[]): Promise<Row[]> {
  const byClass = new Map<string, { times: number[]; hits: number; same: number; under: number; stall: number }>();
  for (const q of queries.slice(0, 10)) await store.searchMessages(q.query, { limit: 20, sort: q.sort }); // warm up
  for (const q of queries) {
    const c = byClass.get(q.cls) ?? { times: [], hits: 0, same: 0, under: 0, stall: 0 };
    byClass.set(q.cls, c);
    const loop = monitorEventLoopDelay({ resolution: 1 });
    loop.enable();
    const t = performance.now();
    const hits = await store.searchMessages(q.query, { limit: 20, sort: q.sort });
    c.times.push(performance.now() - t);
    loop.disable();
    c.stall = Math.max(c.stall, loop.max / 1e6);
    c.hits += hits.length;
    if (q.expected !== null) {
      c.under++;
      if (JSON.stringify(hits.map((h) => h.id)) === JSON.stringify(q.expected)) c.same++;
    }
  }
  return [...byClass].map(([cls, c]) => ({
    backend: name,
    case: cls,
    queries: c.times.length,
    p50: percentile(c.times, 0.5),
    p95: percentile(c.times, 0.95),
    max: Math.max(...c.times),
    hits: c.hits / c.times.length,
    sameTop20: c.same,
    underCap: c.under,
    stallMs: c.stall,
  }));
}

async function importInto(store: SessionStore, file: string, label: string, notes: string[]): Promise<void> {
  const t = performance.now();
  const report = await importHermesStateDb(file, store, { verify: true });
  const seconds = (performance.now() - t) / 1000;
  const verification = report.verification;
  notes.push(
    `${label}: imported ${report.messages.toLocaleString('en')} messages in ${seconds.toFixed(1)} s; verification ${verification?.ok ? 'passed' : `FAILED: ${verification?.problems.slice(0, 3).join('; ')}`} (${verification?.spotChecks.length ?? 0} search spot-checks)`,
  );
}

export async function benchSearch(): Promise<{ rows: Row[]; notes: string[] }> {
  const rows: Row[] = [];
  const notes: string[] = [];
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hsdb-bench-'));
  try {
    const file = path.join(dir, 'state.db');
    let t = performance.now();
    writeHermesHistoryStateDb(file, { messages: MESSAGES });
    notes.push(
      `Hermes-format history: ${MESSAGES.toLocaleString('en')} messages written with Hermes' DDL and FTS triggers in ${((performance.now() - t) / 1000).toFixed(1)} s`,
    );
    const hermes = new Database(file, { readonly: true });
    t = performance.now();
    const queries = buildQueries(hermes);
    notes.push(
      `${queries.length} queries; Hermes' own SQL answered them on the file in ${((performance.now() - t) / 1000).toFixed(1)} s`,
    );
    hermes.close();

    const sqlite = await openStore(`sqlite:${path.join(dir, 'store.db')}`);
    await importInto(sqlite, file, 'SQLite', notes);
    rows.push(...(await measure('sqlite', sqlite, queries)));
    await sqlite.close();

    const admin = postgres(ADMIN_URL, { max: 1, onnotice: () => {}, connect_timeout: 5 });
    try {
      await admin`select 1`;
    } catch {
      notes.push(`Postgres skipped: ${ADMIN_URL.replace(/:[^@/]*@/, ':***@')} unreachable`);
      await admin.end();
      return { rows, notes };
    }
    const name = `hsdb_bench_${Date.now()}`;
    await admin.unsafe(`CREATE DATABASE "${name}"`);
    try {
      const url = new URL(ADMIN_URL);
      url.pathname = `/${name}`;
      const pg = await openStore(url.toString());
      await importInto(pg, file, 'Postgres', notes);
      await pg.vacuum();
      rows.push(...(await measure('postgres', pg, queries)));
      await pg.close();
    } finally {
      await admin.unsafe(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      await admin.end();
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
  return { rows, notes };
}
