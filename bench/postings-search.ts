/**
 * Word search with postings stored as blocks per term on Postgres, ranked by the library's shared core
 * (src/search/rank-postings.ts), measured before the engines switch to it (issue 27). Hermes' file
 * (BENCH_POSTINGS_SOURCE) is tokenized by src/search/postings.ts and each term's list stored as blocks of about
 * 4 KB (src/search/postings-block.ts: `term, first_id, last_id, count, bound, data`). A query lists its terms'
 * blocks (prefixes by key range), reads those the bounds say can reach the top 20, and ranks with FTS5's bm25.
 * Prints, per query class, p50/p95 and the share of queries whose top 20 equals Hermes' own search on the
 * file, the build time, the table's size, and how many blocks the queries read of those they listed.
 */
import fs from 'node:fs';
import Database from 'better-sqlite3';
import postgres from 'postgres';
import { prefixEnd } from '../src/db/pg/postings.js';
import { planSearch } from '../src/repos/search.js';
import { routeCjk } from '../src/search/cjk.js';
import { sanitizeFts5Query } from '../src/search/sanitize.js';
import { type PostingsBlock, encodeBlocks } from '../src/search/postings-block.js';
import { type Posting, indexText } from '../src/search/postings.js';
import { type BlockEntry, type PostingsReader, rankPostings } from '../src/search/rank-postings.js';
import { hermesSearch } from '../test/helpers/hermes-oracle.js';
import { buildQueries } from './search.js';

export interface PostingsSearchRow {
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

/** Tokenize Hermes' file into both indexes and store each as blocks. */
export async function store(db: postgres.Sql, source: string, notes: string[]): Promise<void> {
  for (const { mode, table } of INDEXES) {
    await db.unsafe(`CREATE TABLE ${table} (term text COLLATE "C" NOT NULL, first_id bigint NOT NULL,
        last_id bigint NOT NULL, count int NOT NULL, bound bytea NOT NULL, data bytea NOT NULL,
        PRIMARY KEY (term, first_id));
      CREATE TABLE ${table}_totals (messages bigint NOT NULL, tokens bigint NOT NULL)`);
    const hermes = new Database(source, { readonly: true });
    // Per term, flat arrays (ids, counts, positions): the trigram index has 19 million postings.
    const lists = new Map<string, { ids: number[]; counts: number[]; positions: number[] }>();
    const lengths = new Map<number, number>();
    let tokens = 0;
    let t = performance.now();
    try {
      const texts = hermes
        .prepare('SELECT id, c0 AS text FROM messages_fts_content ORDER BY id')
        .iterate() as Iterable<{ id: number; text: string | null }>;
      for (const { id, text } of texts) {
        const { terms, length } = indexText(text ?? '', mode);
        lengths.set(id, length);
        tokens += length;
        for (const [term, positions] of terms) {
          let list = lists.get(term);
          if (!list) {
            list = { ids: [], counts: [], positions: [] };
            lists.set(term, list);
          }
          list.ids.push(id);
          list.counts.push(positions.length);
          for (const p of positions) list.positions.push(p);
        }
      }
    } finally {
      hermes.close();
    }
    const tokenized = performance.now() - t;
    t = performance.now();
    const blocks: PostingsBlock[] = [];
    for (const [term, list] of lists) {
      const postings: Posting[] = [];
      let at = 0;
      for (const [k, id] of list.ids.entries()) {
        postings.push({ id, positions: list.positions.slice(at, at + list.counts[k]!) });
        at += list.counts[k]!;
      }
      blocks.push(...encodeBlocks(term, postings, (id) => lengths.get(id) ?? 0));
    }
    lists.clear();
    const encoded = performance.now() - t;
    t = performance.now();
    for (let i = 0; i < blocks.length; i += 2_000)
      await db`INSERT INTO ${db(table)} ${db(
        blocks.slice(i, i + 2_000).map((b) => ({
          term: b.term,
          first_id: b.firstId,
          last_id: b.lastId,
          count: b.count,
          bound: Buffer.from(b.bound),
          data: Buffer.from(b.data),
        })),
      )}`;
    await db`INSERT INTO ${db(`${table}_totals`)} VALUES (${lengths.size}, ${tokens})`;
    await db.unsafe(`VACUUM ANALYZE ${table}`);
    const [size] = await db<{ bytes: string }[]>`SELECT pg_total_relation_size(${table}) AS bytes`;
    notes.push(
      `postings on Postgres, ${mode}: ${lengths.size.toLocaleString('en')} messages tokenized in ${(tokenized / 1000).toFixed(1)} s, ${blocks.length.toLocaleString('en')} blocks encoded in ${(encoded / 1000).toFixed(1)} s and stored in ${((performance.now() - t) / 1000).toFixed(1)} s; ${(Number(size!.bytes) / 2 ** 20).toFixed(1)} MiB with their key`,
    );
  }
}

/** The blocks on Postgres, as the shared core reads them. */
export function postgresReader(db: postgres.Sql, table: string): PostingsReader {
  const t = db(table);
  type Row = { term: string; first_id: string; last_id: string; count: number; bound: Uint8Array };
  const entry = (r: Row): BlockEntry => ({
    term: r.term,
    firstId: Number(r.first_id),
    lastId: Number(r.last_id),
    count: r.count,
    bound: r.bound,
  });
  return {
    async blocks(terms, prefixes) {
      const reads = [
        terms.length > 0
          ? db<
              Row[]
            >`SELECT term, first_id, last_id, count, bound FROM ${t} WHERE term = ANY(${terms as string[]}::text[])`
          : Promise.resolve([] as Row[]),
        ...prefixes.map((p) => {
          const end = prefixEnd(p);
          return end === null
            ? db<
                Row[]
              >`SELECT term, first_id, last_id, count, bound FROM ${t} WHERE term >= ${p} AND starts_with(term, ${p})`
            : db<Row[]>`SELECT term, first_id, last_id, count, bound FROM ${t} WHERE term >= ${p} AND term < ${end}`;
        }),
      ];
      const seen = new Set<string>();
      const out: BlockEntry[] = [];
      for (const rows of await Promise.all(reads))
        for (const r of rows) {
          const key = `${r.first_id}\u0000${r.term}`;
          if (!seen.has(key)) {
            seen.add(key);
            out.push(entry(r));
          }
        }
      return out;
    },
    async read(blocks) {
      const rows = await db<{ data: Uint8Array }[]>`
        SELECT b.data FROM unnest(${blocks.map((b) => b.term)}::text[], ${blocks.map((b) => b.firstId)}::int8[])
          WITH ORDINALITY AS k(term, first_id, n)
        JOIN ${t} b ON b.term = k.term AND b.first_id = k.first_id ORDER BY k.n`;
      return rows.map((r) => r.data);
    },
    async totals() {
      const [row] = await db<
        { messages: string; tokens: string }[]
      >`SELECT messages, tokens FROM ${db(`${table}_totals`)}`;
      return { messages: Number(row!.messages), tokens: Number(row!.tokens) };
    },
  };
}

const percentile = (xs: number[], p: number) =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(p * xs.length))] ?? 0;

/** Search over blocks (both indexes) on a new database of the Postgres server at `adminUrl`; dropped at the end. */
export async function benchPostingsSearch(source: string, adminUrl: string): Promise<PostingsSearchResult> {
  const notes: string[] = [];
  if (!fs.existsSync(source)) return { rows: [], notes: [`postings on Postgres skipped: ${source} is missing`] };
  const admin = postgres(adminUrl, { max: 1, onnotice: () => {}, connect_timeout: 5 });
  try {
    await admin`select 1`;
  } catch {
    await admin.end();
    return { rows: [], notes: ['postings on Postgres skipped: the server is unreachable'] };
  }
  const name = `hsdb_bench_postings_${Date.now()}`;
  await admin.unsafe(`CREATE DATABASE "${name}" LC_CTYPE 'C.UTF-8' TEMPLATE template0`);
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  const db = postgres(url.toString(), { max: 1, onnotice: () => {} });
  try {
    await store(db, source, notes);
    const hermes = new Database(source, { readonly: true });
    // Every query is compared: the blocks rank every match, as Hermes does (no rank window).
    const queries = buildQueries(hermes)
      .filter((q) => q.sort === undefined)
      .map((q) => ({ ...q, expected: q.expected ?? hermesSearch(hermes, q.query, { limit: 20 }).map((h) => h.id) }));
    hermes.close();
    const readers = { words: postgresReader(db, 'postings_words'), substrings: postgresReader(db, 'postings_trigram') };
    // Warm up (the search bench does the same): the first queries of a process compile the code they run.
    for (const q of queries.slice(0, 10)) await rankPostings(sanitizeFts5Query(q.query), readers.words, 20);
    let blocksRead = 0;
    let blocksListed = 0;
    const byClass = new Map<string, { times: number[]; same: number; under: number }>();
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
      const c = byClass.get(q.cls) ?? { times: [], same: 0, under: 0 };
      byClass.set(q.cls, c);
      const t = performance.now();
      const ranked = await rankPostings(target.match, readers[target.mode], 20, target.mode);
      const ids = ranked.ids;
      blocksRead += ranked.blocksRead;
      blocksListed += ranked.blocksListed;
      c.times.push(performance.now() - t);
      c.under++;
      if (JSON.stringify(ids) === JSON.stringify(q.expected)) c.same++;
    }
    notes.push(
      `postings on Postgres: the queries read ${blocksRead.toLocaleString('en')} blocks of the ${blocksListed.toLocaleString('en')} their terms have`,
    );
    return {
      rows: [...byClass].map(([cls, c]) => ({
        case: cls,
        queries: c.times.length,
        p50: percentile(c.times, 0.5),
        p95: percentile(c.times, 0.95),
        sameTop20: c.same,
        compared: c.under,
      })),
      notes,
    };
  } finally {
    await db.end();
    await admin.unsafe(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
    await admin.end();
  }
}
