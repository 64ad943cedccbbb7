/**
 * Search with postings stored as blocks per term on Postgres and MariaDB, ranked by the library's shared core
 * (src/search/rank-postings.ts), measured before the engines switch to it (issue 27). Hermes' file
 * (BENCH_POSTINGS_SOURCE) is tokenized by src/search/postings.ts into both of Hermes' indexes (words and
 * trigrams), each term's list cut into blocks of about 4 KB (src/search/postings-block.ts) and stored on each
 * engine (bench/postings-stores.ts). A query lists its terms' blocks (prefixes by key range), reads those that
 * can reach the top 20, and ranks with FTS5's bm25. Prints, per engine and query class, p50/p95 (of each
 * query's median of 3 runs) and the share of queries whose top 20 equals Hermes' own search on the file, the
 * build time, the tables' sizes, and how many blocks the queries read of those they listed.
 */
import fs from 'node:fs';
import Database from 'better-sqlite3';
import { planSearch } from '../src/repos/search.js';
import { routeCjk } from '../src/search/cjk.js';
import { sanitizeFts5Query } from '../src/search/sanitize.js';
import type { PostingsBlock } from '../src/search/postings-block.js';
import { PostingsBuilder } from '../src/search/postings-build.js';
import { indexText } from '../src/search/postings.js';
import type { QueryMode } from '../src/search/query.js';
import { type PostingsReader, rankPostings } from '../src/search/rank-postings.js';
import { hermesSearch } from '../test/helpers/hermes-oracle.js';
import { type BlockStore, mariadbBlockStore, postgresBlockStore } from './postings-stores.js';
import { buildQueries } from './search.js';

export interface PostingsSearchRow {
  engine: string;
  case: string;
  queries: number;
  p50: number;
  p95: number;
  sameTop20: number;
  compared: number;
}

export interface PostingsSearchResult {
  rows: PostingsSearchRow[];
  notes: string[];
}

/** The two indexes Hermes keeps, as tables of blocks here. */
const INDEXES = [
  { mode: 'words', table: 'postings_words' },
  { mode: 'substrings', table: 'postings_trigram' },
] as const;

interface BuiltIndex {
  mode: QueryMode;
  table: string;
  blocks: PostingsBlock[];
  totals: { messages: number; tokens: number };
}

/** Tokenize Hermes' file into both indexes, each cut into blocks (src/search/postings-build.ts). */
function build(source: string, notes: string[]): BuiltIndex[] {
  return INDEXES.map(({ mode, table }) => {
    const hermes = new Database(source, { readonly: true });
    const builder = new PostingsBuilder();
    let t = performance.now();
    try {
      const texts = hermes
        .prepare('SELECT id, c0 AS text FROM messages_fts_content ORDER BY id')
        .iterate() as Iterable<{ id: number; text: string | null }>;
      for (const { id, text } of texts) builder.add(id, indexText(text ?? '', mode));
    } finally {
      hermes.close();
    }
    const tokenized = performance.now() - t;
    const totals = { messages: builder.messages, tokens: builder.tokens };
    t = performance.now();
    const blocks = [...builder.blocks()].flat();
    // Key order: each engine's primary key then fills its pages in order, as a rebuild or a merge would.
    const bytes = (term: string) => Buffer.from(term, 'utf8');
    blocks.sort((a, b) => Buffer.compare(bytes(a.term), bytes(b.term)) || a.firstId - b.firstId);
    notes.push(
      `postings, ${mode}: ${totals.messages.toLocaleString('en')} messages tokenized in ${(tokenized / 1000).toFixed(1)} s, ${blocks.length.toLocaleString('en')} blocks encoded in ${((performance.now() - t) / 1000).toFixed(1)} s`,
    );
    return { mode, table, blocks, totals };
  });
}

/** Runs of each query (its median counts). */
const REPEATS = 3;

const percentile = (xs: number[], p: number) =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(p * xs.length))] ?? 0;

type Query = ReturnType<typeof buildQueries>[number] & { expected: number[] };

/** Store the indexes on one engine and run every query there. */
async function onEngine(store: BlockStore, indexes: BuiltIndex[], queries: Query[], notes: string[]) {
  const readers = new Map<QueryMode, PostingsReader>();
  for (const index of indexes) {
    const t = performance.now();
    await store.create(index.table);
    const skipped = await store.insert(index.table, index.blocks, index.totals);
    const bytes = await store.size(index.table);
    notes.push(
      `postings on ${store.engine}, ${index.mode}: stored in ${((performance.now() - t) / 1000).toFixed(1)} s, ${(bytes / 2 ** 20).toFixed(1)} MiB with their key${skipped > 0 ? `; ${skipped} blocks of terms longer than the key skipped` : ''}`,
    );
    readers.set(index.mode, store.reader(index.table));
  }
  // Warm up (the search bench does the same): the first queries of a process compile the code they run.
  for (const q of queries.slice(0, 10)) await rankPostings(sanitizeFts5Query(q.query), readers.get('words')!, 20);
  let blocksRead = 0;
  let blocksListed = 0;
  let slowest = { ms: 0, query: '' };
  const byClass = new Map<string, { times: number[]; same: number; compared: number }>();
  for (const q of queries) {
    // The word path, or the trigram path for CJK (short CJK goes to a LIKE scan in Hermes: not postings).
    const sanitized = sanitizeFts5Query(q.query);
    const plan = planSearch(q.query);
    const route = plan.path === 'substrings' ? routeCjk(sanitized) : null;
    const target =
      plan.path === 'words'
        ? { match: sanitized, mode: 'words' as const }
        : route?.path === 'trigram'
          ? { match: route.query, mode: 'substrings' as const }
          : null;
    if (target === null) continue;
    const c = byClass.get(q.cls) ?? { times: [], same: 0, compared: 0 };
    byClass.set(q.cls, c);
    // Each query runs REPEATS times and counts its median: with 20 queries a class, p95 is its second-slowest
    // query, and one slow run of it would otherwise move the figure.
    const runs: number[] = [];
    let ranked: Awaited<ReturnType<typeof rankPostings>> | null = null;
    for (let r = 0; r < REPEATS; r++) {
      const t = performance.now();
      ranked = await rankPostings(target.match, readers.get(target.mode)!, 20, target.mode);
      runs.push(performance.now() - t);
    }
    if (ranked === null) continue;
    const ms = percentile(runs, 0.5);
    c.times.push(ms);
    if (ms > slowest.ms) slowest = { ms, query: `${q.cls}: ${q.query}` };
    blocksRead += ranked.blocksRead;
    blocksListed += ranked.blocksListed;
    c.compared++;
    if (JSON.stringify(ranked.ids) === JSON.stringify(q.expected)) c.same++;
  }
  notes.push(
    `postings on ${store.engine}: the queries read ${blocksRead.toLocaleString('en')} blocks of the ${blocksListed.toLocaleString('en')} their terms have; the slowest query took ${slowest.ms.toFixed(0)} ms (${slowest.query})`,
  );
  return [...byClass].map(([cls, c]) => ({
    engine: store.engine,
    case: cls,
    queries: c.times.length,
    p50: percentile(c.times, 0.5),
    p95: percentile(c.times, 0.95),
    sameTop20: c.same,
    compared: c.compared,
  }));
}

/** Search over blocks (both indexes) on fresh databases of the Postgres and MariaDB servers; dropped at the end. */
export async function benchPostingsSearch(
  source: string,
  servers: { postgres: string; mysql: string },
): Promise<PostingsSearchResult> {
  const notes: string[] = [];
  if (!fs.existsSync(source)) return { rows: [], notes: [`postings on the servers skipped: ${source} is missing`] };
  const indexes = build(source, notes);
  const hermes = new Database(source, { readonly: true });
  // Every query is compared: the blocks rank every match, as Hermes does (no rank window).
  const queries = buildQueries(hermes)
    .filter((q) => q.sort === undefined)
    .map((q) => ({ ...q, expected: q.expected ?? hermesSearch(hermes, q.query, { limit: 20 }).map((h) => h.id) }));
  hermes.close();
  const rows: PostingsSearchRow[] = [];
  for (const [label, open] of [
    ['Postgres', () => postgresBlockStore(servers.postgres)],
    ['MariaDB', () => mariadbBlockStore(servers.mysql)],
  ] as const) {
    const store = await open();
    if (store === null) {
      notes.push(`postings on ${label} skipped: the server is unreachable`);
      continue;
    }
    try {
      rows.push(...(await onEngine(store, indexes, queries, notes)));
    } finally {
      await store.drop();
    }
  }
  return { rows, notes };
}
