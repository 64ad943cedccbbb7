/**
 * Search at a heavy user's scale, against Hermes itself: a BENCH_MESSAGES-message (default 200,000)
 * Hermes-format state.db written by examples/hermes-state-db.ts is imported with verification into an
 * SQLite file, into Postgres and into MariaDB (when reachable); a few hundred queries of every class are run on both and
 * on the original file through Hermes' own search SQL (the oracle). Per class and backend it prints
 * p50/p95/max latency, the share of queries whose top 20 equals Hermes' top 20 (queries over the rank cap
 * are counted apart), and the longest event-loop stall during the searches. A last case, on a store of its
 * own, searches twenty 1 MB pasted logs that each hold the query word hundreds of times (the bounded-cost
 * case of test/search-huge-rows.test.ts, whose 100 ms target is measured here). Prints; asserts nothing.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import Database from 'better-sqlite3';
import mysql from 'mysql2/promise';
import postgres from 'postgres';
import { writeHermesHistoryStateDb } from '../examples/hermes-state-db.js';
import { type SessionStore, importHermesStateDb, openStore } from '../src/index.js';
import { DEFAULT_RANK_WINDOW } from '../src/repos/search.js';
import { hermesMatchCount, hermesSearch, oracleQueries } from '../test/helpers/hermes-oracle.js';

const MESSAGES = Number(process.env.BENCH_MESSAGES ?? 200_000);
/**
 * BENCH_SEARCH_SOURCE=path/to/state.db: a history Hermes wrote (../shared/fixtures/hermes-v11-large-dev.db)
 * instead of a generated one. Its words, phrases and scripts are users' own; generated corpora have misled.
 */
const SOURCE = process.env.BENCH_SEARCH_SOURCE;
const PER_CLASS = Number(process.env.BENCH_QUERIES_PER_CLASS ?? 20);
/** BENCH_SEARCH_BACKENDS=sqlite,postgres,mariadb (default: all three) runs only those. */
const BACKENDS = new Set(
  (process.env.BENCH_SEARCH_BACKENDS ?? 'sqlite,postgres,mariadb').split(',').map((b) => b.trim()),
);
const ADMIN_URL = process.env.DATABASE_URL ?? 'postgres://root@127.0.0.1:5432/test';
const MYSQL_ADMIN_URL = process.env.MYSQL_URL ?? 'mysql://root@127.0.0.1:3306/test';

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
  /** False where no Hermes answer was computed (the 1 MB rows case). */
  oracle?: boolean;
  stallMs: number;
}

/** Bytes a backend spends on search structures for the same messages, next to FTS5's in Hermes' own file. */
export interface SizeRow {
  backend: string;
  bytes: number;
  /** What was counted, with each part's MiB. */
  parts: string;
}

const mib = (bytes: number) => (bytes / 2 ** 20).toFixed(1);
const describeParts = (parts: Record<string, number>) =>
  Object.entries(parts)
    .map(([name, bytes]) => `${name} ${mib(bytes)}`)
    .join(', ');
const sum = (parts: Record<string, number>) => Object.values(parts).reduce((a, b) => a + b, 0);

/**
 * FTS5's index in an SQLite file (dbstat): the words and trigram tables' postings, their document sizes and
 * configuration. The `_content` tables (a second copy of the text, kept by Hermes' inline-content tables) are
 * reported apart: they are text, not index.
 */
export function fts5Size(
  file: string,
  backend: string,
): { index: SizeRow; words: number; trigram: number; contentCopies: number } {
  const db = new Database(file, { readonly: true });
  try {
    const pages = db
      .prepare(
        "SELECT name, sum(pgsize) AS bytes FROM dbstat WHERE name LIKE 'messages\\_fts%' ESCAPE '\\' GROUP BY name",
      )
      .all() as { name: string; bytes: number }[];
    const parts = { words: 0, trigram: 0 };
    let contentCopies = 0;
    for (const { name, bytes } of pages) {
      if (name.endsWith('_content')) contentCopies += bytes;
      else parts[name.startsWith('messages_fts_trigram') ? 'trigram' : 'words'] += bytes;
    }
    return { index: { backend, bytes: sum(parts), parts: describeParts(parts) }, ...parts, contentCopies };
  } finally {
    db.close();
  }
}

/** Postgres: the block index with its recent segment and queues, and the CJK grams of short-CJK search. */
async function postgresSearchSize(url: string): Promise<SizeRow> {
  const db = postgres(url, { max: 1, onnotice: () => {} });
  try {
    const [row] = await db<{ blocks: string; recent: string; columns: string; indexes: string }[]>`
      SELECT pg_total_relation_size('message_search_blocks') AS blocks,
        pg_total_relation_size('message_search_recent') + pg_total_relation_size('message_search_removed')
          + pg_total_relation_size('message_search_merged') AS recent,
        (SELECT COALESCE(sum(pg_column_size(search_cjk)), 0) FROM messages) AS columns,
        (SELECT COALESCE(sum(pg_relation_size(c.oid)), 0) FROM pg_class c
          WHERE c.relname = 'idx_messages_search_cjk') AS indexes`;
    // The block index is what search reads; the CJK grams narrow Hermes' LIKE scan for CJK under 3 characters.
    const parts = {
      'message_search_blocks (both indexes)': Number(row!.blocks),
      'recent segment and queues': Number(row!.recent),
      'search_cjk column of messages (0004)': Number(row!.columns),
      'idx_messages_search_cjk (0004)': Number(row!.indexes),
    };
    return { backend: 'postgres', bytes: sum(parts), parts: describeParts(parts) };
  } finally {
    await db.end();
  }
}

/** MariaDB/MySQL: the block index's tables (migration 0007), with their keys. */
async function mariadbSearchSize(admin: mysql.Connection, database: string): Promise<SizeRow> {
  const tables = ['message_search_blocks', 'message_search_recent', 'message_search_removed', 'message_search_merged'];
  await admin.query(`ANALYZE TABLE ${tables.map((t) => `\`${database}\`.\`${t}\``).join(', ')}`);
  const [found] = (await admin.query(
    'SELECT table_name AS t, data_length + index_length AS bytes FROM information_schema.TABLES WHERE table_schema = ? AND table_name IN (?)',
    [database, tables],
  )) as unknown as [{ t: string; bytes: number | string }[]];
  const bytes = (t: string) => Number(found.find((r) => r.t === t)?.bytes ?? 0);
  const parts = {
    'message_search_blocks (postings, keys)': bytes('message_search_blocks'),
    'recent segment and queues':
      bytes('message_search_recent') + bytes('message_search_removed') + bytes('message_search_merged'),
  };
  return { backend: 'mariadb', bytes: sum(parts), parts: describeParts(parts) };
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

const HUGE_ROWS = 20;

/** A 1 MB log in which "timeout" appears on every fourth line (hundreds of times). */
export function pastedLog(n: number): string {
  const lines: string[] = [];
  let size = 0;
  for (let i = 0; size < 1024 * 1024; i++) {
    const day = String(1 + (i % 28)).padStart(2, '0');
    const minute = String(i % 60).padStart(2, '0');
    const line =
      i % 4 === 0
        ? `2026-11-${day} 12:${minute} WARN upstream timeout after 30s on request ${n}-${i}, retrying with backoff`
        : `2026-11-${day} 12:${minute} INFO served request ${n}-${i} in ${i % 97} ms from cache shard ${i % 13}`;
    lines.push(line);
    size += line.length + 1;
  }
  return lines.join('\n');
}

/** Twenty 1 MB logs and 50 chat lines, all holding "timeout"; every search returns all 70 (limit 80). */
async function measureHugeRows(name: string, store: SessionStore): Promise<Row[]> {
  await store.createSession('logs', 'cli');
  await store.createSession('chat', 'telegram');
  for (let i = 0; i < 50; i++)
    await store.appendMessage('chat', i % 2 ? 'user' : 'assistant', `the deploy hit a timeout again, message ${i}`);
  for (let i = 0; i < HUGE_ROWS; i++) await store.appendMessage('logs', 'tool', pastedLog(i), { toolName: 'terminal' });
  const out: Row[] = [];
  for (const sort of ['relevance', 'newest', 'oldest'] as const) {
    await store.searchMessages('timeout', { sort, limit: 80 }); // warm up
    const times: number[] = [];
    let stall = 0;
    let hits = 0;
    for (let i = 0; i < 20; i++) {
      const loop = monitorEventLoopDelay({ resolution: 1 });
      loop.enable();
      const t = performance.now();
      hits += (await store.searchMessages('timeout', { sort, limit: 80 })).length;
      times.push(performance.now() - t);
      loop.disable();
      stall = Math.max(stall, loop.max / 1e6);
    }
    out.push({
      backend: name,
      case: `1 MB rows, ${sort} (80)`,
      queries: times.length,
      p50: percentile(times, 0.5),
      p95: percentile(times, 0.95),
      max: Math.max(...times),
      hits: hits / times.length,
      sameTop20: 0,
      underCap: 0,
      oracle: false,
      stallMs: stall,
    });
  }
  return out;
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

export async function benchSearch(): Promise<{ rows: Row[]; notes: string[]; sizes: SizeRow[] }> {
  const rows: Row[] = [];
  const notes: string[] = [];
  const sizes: SizeRow[] = [];
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hsdb-bench-'));
  try {
    const file = SOURCE ? path.resolve(SOURCE) : path.join(dir, 'state.db');
    let t = performance.now();
    if (SOURCE) {
      const count = new Database(file, { readonly: true });
      const n = (count.prepare('SELECT count(*) AS n FROM messages').get() as { n: number }).n;
      count.close();
      notes.push(`Hermes' own history: ${file}, ${n.toLocaleString('en')} messages`);
    } else {
      writeHermesHistoryStateDb(file, { messages: MESSAGES });
      notes.push(
        `Hermes-format history: ${MESSAGES.toLocaleString('en')} messages written with Hermes' DDL and FTS triggers in ${((performance.now() - t) / 1000).toFixed(1)} s`,
      );
    }
    const hermes = new Database(file, { readonly: true });
    t = performance.now();
    const queries = buildQueries(hermes);
    notes.push(
      `${queries.length} queries; Hermes' own SQL answered them on the file in ${((performance.now() - t) / 1000).toFixed(1)} s`,
    );
    hermes.close();
    const hermesFts5 = fts5Size(file, "FTS5 in Hermes' file");
    sizes.push(hermesFts5.index);
    notes.push(
      `FTS5 in Hermes' file: ${hermesFts5.index.parts} MiB of index; its inline-content tables hold another ${mib(hermesFts5.contentCopies)} MiB of text (not counted)`,
    );

    if (BACKENDS.has('sqlite')) {
      const sqlite = await openStore(`sqlite:${path.join(dir, 'store.db')}`);
      await importInto(sqlite, file, 'SQLite', notes);
      rows.push(...(await measure('sqlite', sqlite, queries)));
      await sqlite.close();
      sizes.push(fts5Size(path.join(dir, 'store.db'), 'sqlite').index);
      const sqliteHuge = await openStore(`sqlite:${path.join(dir, 'huge.db')}`);
      rows.push(...(await measureHugeRows('sqlite', sqliteHuge)));
      await sqliteHuge.close();
    }
    if (BACKENDS.has('postgres')) await benchPostgres(file, queries, rows, notes, sizes);
    if (BACKENDS.has('mariadb')) await benchMariadb(file, queries, rows, notes, sizes);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
  return { rows, notes, sizes };
}

/** The same queries on Postgres (DATABASE_URL): the block index, ranked by the shared core. */
async function benchPostgres(
  file: string,
  queries: Query[],
  rows: Row[],
  notes: string[],
  sizes: SizeRow[],
): Promise<void> {
  const admin = postgres(ADMIN_URL, { max: 1, onnotice: () => {}, connect_timeout: 5 });
  try {
    await admin`select 1`;
  } catch {
    notes.push(`Postgres skipped: ${ADMIN_URL.replace(/:[^@/]*@/, ':***@')} unreachable`);
    await admin.end();
    return;
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
    sizes.push(await postgresSearchSize(url.toString()));
    await admin.unsafe(`CREATE DATABASE "${name}_huge"`);
    try {
      url.pathname = `/${name}_huge`;
      const pgHuge = await openStore(url.toString());
      rows.push(...(await measureHugeRows('postgres', pgHuge)));
      await pgHuge.close();
    } finally {
      await admin.unsafe(`DROP DATABASE IF EXISTS "${name}_huge" WITH (FORCE)`);
    }
  } finally {
    await admin.unsafe(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
    await admin.end();
  }
}

/** The same queries on MariaDB/MySQL (MYSQL_URL): FULLTEXT narrows, FTS5's rules judge, bm25 ranks in TypeScript. */
async function benchMariadb(
  file: string,
  queries: Query[],
  rows: Row[],
  notes: string[],
  sizes: SizeRow[],
): Promise<void> {
  let admin: mysql.Connection;
  try {
    admin = await mysql.createConnection({ uri: MYSQL_ADMIN_URL, connectTimeout: 5000 });
  } catch {
    notes.push(`MariaDB skipped: ${MYSQL_ADMIN_URL.replace(/:[^@/]*@/, ':***@')} unreachable`);
    return;
  }
  const name = `hsdb_bench_${Date.now()}`;
  const url = new URL(MYSQL_ADMIN_URL);
  try {
    for (const db of [name, `${name}_huge`]) await admin.query(`CREATE DATABASE \`${db}\``);
    url.pathname = `/${name}`;
    const my = await openStore(url.toString());
    await importInto(my, file, 'MariaDB', notes);
    rows.push(...(await measure('mariadb', my, queries)));
    await my.close();
    sizes.push(await mariadbSearchSize(admin, name));
    url.pathname = `/${name}_huge`;
    const myHuge = await openStore(url.toString());
    rows.push(...(await measureHugeRows('mariadb', myHuge)));
    await myHuge.close();
  } finally {
    for (const db of [name, `${name}_huge`]) await admin.query(`DROP DATABASE IF EXISTS \`${db}\``);
    await admin.end();
  }
}
