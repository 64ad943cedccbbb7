/**
 * Search latency over a large store: p50/p95 per query class on SQLite (file) and Postgres (when
 * DATABASE_URL or the default server is reachable). Prints a table; asserts nothing.
 *
 *   npm run bench            200,000 messages (BENCH_MESSAGES to change)
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import postgres from 'postgres';
import { type SessionStore, openStore } from '../src/index.js';
import { CODE, EN, ZH, corpus, rng } from '../test/helpers/corpus.js';

const MESSAGES = Number(process.env.BENCH_MESSAGES ?? 200_000);
const RUNS = Number(process.env.BENCH_RUNS ?? 40);
const ADMIN_URL = process.env.DATABASE_URL ?? 'postgres://root@127.0.0.1:5432/test';

export interface Row {
  backend: string;
  case: string;
  p50: number;
  p95: number;
  max: number;
  hits: number;
}

async function load(store: SessionStore, total: number): Promise<number> {
  const started = performance.now();
  const messages = corpus(total, 7);
  const bySession = new Map<string, { source: string; rows: Record<string, unknown>[] }>();
  for (const m of messages) {
    const s = bySession.get(m.session) ?? { source: m.source, rows: [] };
    s.rows.push({ role: m.role, content: m.content, toolName: m.toolName ?? null, toolCalls: m.toolCalls ?? null });
    bySession.set(m.session, s);
  }
  for (const [id, s] of bySession) {
    await store.createSession(id, s.source);
    await store.replaceMessages(id, s.rows);
  }
  return (performance.now() - started) / 1000;
}

const percentile = (xs: number[], p: number) => {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]!;
};

function cases(): Array<[string, (i: number) => string]> {
  const r = rng(99);
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(r() * xs.length)]!;
  const cjk4 = ZH.filter((z) => [...z].length >= 4);
  return [
    ['english term', () => pick(EN)],
    ['phrase', () => `"${pick(EN)} ${pick(EN)}"`],
    ['prefix', () => `${pick(EN).slice(0, 3)}*`],
    ['prefix the*', () => 'the*'],
    ['OR', () => `${pick(EN)} OR ${pick(EN)}`],
    ['code term', () => pick(CODE)],
    ['CJK 2 chars', () => pick(ZH).slice(0, 2)],
    ['CJK 4 chars', () => pick(cjk4).slice(0, 4)],
    // Worst case of the short-CJK scan: a term that is nowhere, so every row is read.
    ['CJK 2 chars, absent', () => '龘靐'],
  ];
}

async function measure(name: string, store: SessionStore): Promise<Row[]> {
  const rows: Row[] = [];
  for (const [label, make] of cases()) {
    const times: number[] = [];
    let hits = 0;
    for (let i = 0; i < RUNS; i++) {
      const q = make(i);
      const t = performance.now();
      hits += (await store.searchMessages(q, { limit: 20 })).length;
      times.push(performance.now() - t);
    }
    rows.push({ backend: name, case: label, p50: percentile(times, 0.5), p95: percentile(times, 0.95), max: Math.max(...times), hits: hits / RUNS });
  }
  return rows;
}

export async function benchSearch(): Promise<{ rows: Row[]; notes: string[] }> {
  const rows: Row[] = [];
  const notes: string[] = [];
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hsdb-bench-'));
  try {
    const sqlite = await openStore(`sqlite:${path.join(dir, 'bench.db')}`, { synchronous: 'NORMAL' });
    const loadS = await load(sqlite, MESSAGES);
    notes.push(`SQLite load: ${MESSAGES} messages in ${loadS.toFixed(1)} s (${Math.round(MESSAGES / loadS)} msg/s, replaceMessages per session)`);
    rows.push(...(await measure('sqlite', sqlite)));
    await sqlite.close();
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
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
    const loadP = await load(pg, MESSAGES);
    notes.push(`Postgres load: ${MESSAGES} messages in ${loadP.toFixed(1)} s (${Math.round(MESSAGES / loadP)} msg/s)`);
    await pg.vacuum();
    rows.push(...(await measure('postgres', pg)));
    await pg.close();
  } finally {
    await admin.unsafe(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
    await admin.end();
  }
  return { rows, notes };
}
