/**
 * A prototype, measured before choosing (issue 27): word search with postings stored as blocks per term on
 * Postgres and everything else in TypeScript. Hermes' file (BENCH_POSTINGS_SOURCE) is tokenized by
 * src/search/postings.ts, each term's list stored as rows of about 4 KB (`term, first_id, data bytea`, FTS5's
 * doclist encoding, and `lengths bytea`: each of the block's messages' length in tokens, which bm25 needs). A
 * query fetches its terms' blocks (prefixes by key range), evaluates the query over the decoded lists (phrases
 * by positions; AND, OR, NOT over ids) and ranks every match with FTS5's bm25 (src/search/bm25.ts). Prints, per
 * query class, p50/p95 and the share of queries whose top 20 equals Hermes' own search on the file, the build
 * time, the tables' size, and where a query's time goes. Not the library's search: nothing here is used by it.
 */
import fs from 'node:fs';
import Database from 'better-sqlite3';
import postgres from 'postgres';
import { planSearch } from '../src/repos/search.js';
import { allPhrases, bm25Score, bm25Weights } from '../src/search/bm25.js';
import {
  type Posting,
  decodePostings,
  decodeVarints,
  encodePostings,
  encodeVarints,
  indexText,
} from '../src/search/postings.js';
import type { Phrase, QueryNode } from '../src/search/query.js';
import { buildQueries } from './search.js';

/** Bytes of encoded postings per stored block (a block ends after the posting that reaches it). */
const BLOCK_BYTES = 4096;

export interface PostingsSearchRow {
  case: string;
  queries: number;
  p50: number;
  p95: number;
  sameTop20: number;
  underCap: number;
}

export interface PostingsSearchResult {
  rows: PostingsSearchRow[];
  notes: string[];
}

/** Milliseconds spent per phase, over every query. */
interface Phases {
  fetch: number;
  evaluate: number;
  totals: number;
  rank: number;
  matches: number;
}

async function store(db: postgres.Sql, source: string, notes: string[]): Promise<void> {
  await db.unsafe(`CREATE TABLE postings_blocks (term text COLLATE "C" NOT NULL, first_id bigint NOT NULL,
      data bytea NOT NULL, lengths bytea NOT NULL, PRIMARY KEY (term, first_id));
    CREATE TABLE postings_totals (messages bigint NOT NULL, tokens bigint NOT NULL)`);
  const hermes = new Database(source, { readonly: true });
  const lists = new Map<string, Posting[]>();
  const lengths: { id: number; length: number }[] = [];
  let t = performance.now();
  try {
    const texts = hermes.prepare('SELECT id, c0 AS text FROM messages_fts_content ORDER BY id').iterate() as Iterable<{
      id: number;
      text: string | null;
    }>;
    for (const { id, text } of texts) {
      const { terms, length } = indexText(text ?? '', 'words');
      lengths.push({ id, length });
      for (const [term, positions] of terms) {
        let list = lists.get(term);
        if (!list) {
          list = [];
          lists.set(term, list);
        }
        list.push({ id, positions });
      }
    }
  } finally {
    hermes.close();
  }
  const tokenized = performance.now() - t;
  t = performance.now();
  const blocks: { term: string; first_id: number; data: Buffer; lengths: Buffer }[] = [];
  const lengthOf = new Map(lengths.map((l) => [l.id, l.length]));
  for (const [term, list] of lists) {
    let block: Posting[] = [];
    let bytes = 0;
    const flush = () => {
      if (block.length > 0)
        blocks.push({
          term,
          first_id: block[0]!.id,
          data: Buffer.from(encodePostings(block)),
          lengths: Buffer.from(encodeVarints(block.map((p) => lengthOf.get(p.id) ?? 0))),
        });
      block = [];
      bytes = 0;
    };
    for (const posting of list) {
      block.push(posting);
      bytes += 3 + 2 * posting.positions.length;
      if (bytes >= BLOCK_BYTES) flush();
    }
    flush();
  }
  for (let i = 0; i < blocks.length; i += 2_000)
    await db`INSERT INTO postings_blocks ${db(blocks.slice(i, i + 2_000))}`;
  const tokens = lengths.reduce((sum, l) => sum + l.length, 0);
  await db`INSERT INTO postings_totals VALUES (${lengths.length}, ${tokens})`;
  await db.unsafe('VACUUM ANALYZE');
  const [size] = await db<{ blocks: string }[]>`SELECT pg_total_relation_size('postings_blocks') AS blocks`;
  notes.push(
    `postings on Postgres (prototype): ${lengths.length.toLocaleString('en')} messages tokenized in ${(tokenized / 1000).toFixed(1)} s, ${blocks.length.toLocaleString('en')} blocks stored in ${((performance.now() - t) / 1000).toFixed(1)} s; ${(Number(size!.blocks) / 2 ** 20).toFixed(1)} MiB with their key`,
  );
}

/** Relevance top 20 of a word query: every match ranked by FTS5's bm25, ties by id. */
async function search(db: postgres.Sql, root: QueryNode, phases: Phases): Promise<number[]> {
  const t0 = performance.now();
  const phrases = allPhrases(root);
  const exact = new Set<string>();
  const prefixes = new Set<string>();
  for (const p of phrases)
    for (const [i, token] of p.tokens.entries()) (p.prefix && i === p.tokens.length - 1 ? prefixes : exact).add(token);
  const postings = new Map<string, Posting[]>();
  const lengths = new Map<number, number>();
  const add = (term: string, data: Uint8Array, blockLengths: Uint8Array) => {
    let list = postings.get(term);
    if (!list) {
      list = [];
      postings.set(term, list);
    }
    const decoded = decodePostings(data);
    const messageLengths = decodeVarints(blockLengths);
    for (const [i, p] of decoded.entries()) {
      list.push(p);
      lengths.set(p.id, messageLengths[i]!);
    }
  };
  if (exact.size > 0)
    for (const r of await db<{ term: string; data: Uint8Array; lengths: Uint8Array }[]>`
      SELECT term, data, lengths FROM postings_blocks WHERE term = ANY(${[...exact]}::text[]) ORDER BY term, first_id`)
      add(r.term, r.data, r.lengths);
  const termsOfPrefix = new Map<string, string[]>();
  for (const prefix of prefixes) {
    // Terms an earlier read already holds are not added twice (a word also asked for whole, an overlapping prefix).
    const before = new Set(postings.keys());
    const terms = new Set<string>();
    for (const r of await db<{ term: string; data: Uint8Array; lengths: Uint8Array }[]>`
      SELECT term, data, lengths FROM postings_blocks WHERE term >= ${prefix} AND term < ${`${prefix}\uffff`}
      ORDER BY term, first_id`) {
      if (!before.has(r.term)) add(r.term, r.data, r.lengths);
      terms.add(r.term);
    }
    termsOfPrefix.set(prefix, [...terms]);
  }
  const t1 = performance.now();
  phases.fetch += t1 - t0;

  const positionsOf = (token: string, prefix: boolean): Map<number, number[]> => {
    const out = new Map<number, number[]>();
    for (const term of prefix ? (termsOfPrefix.get(token) ?? []) : [token])
      for (const p of postings.get(term) ?? []) {
        const at = out.get(p.id);
        out.set(p.id, at ? [...at, ...p.positions].sort((a, b) => a - b) : p.positions);
      }
    return out;
  };
  /** Per message, how often the phrase occurs (FTS5's phrase frequency). */
  const frequencies = (p: Phrase): Map<number, number> => {
    const out = new Map<number, number>();
    if (p.tokens.length === 0) return out;
    const lists = p.tokens.map((token, i) => positionsOf(token, p.prefix && i === p.tokens.length - 1));
    for (const [id, first] of lists[0]!) {
      if (lists.length === 1) {
        out.set(id, first.length);
        continue;
      }
      const rest = lists.slice(1).map((l) => l.get(id));
      if (rest.some((r) => r === undefined)) continue;
      const sets = rest.map((r) => new Set(r));
      let n = 0;
      for (const at of first) if (sets.every((s, k) => s.has(at + k + 1))) n++;
      if (n > 0) out.set(id, n);
    }
    return out;
  };
  const perPhrase = phrases.map(frequencies);
  let next = 0;
  const evaluate = (node: QueryNode): Set<number> => {
    switch (node.kind) {
      case 'phrase':
        return new Set(perPhrase[next++]!.keys());
      case 'and': {
        const sets = node.children.map(evaluate);
        return new Set([...sets[0]!].filter((id) => sets.every((s) => s.has(id))));
      }
      case 'or': {
        const out = new Set<number>();
        for (const set of node.children.map(evaluate)) for (const id of set) out.add(id);
        return out;
      }
      case 'not': {
        const left = evaluate(node.left);
        const right = evaluate(node.right);
        return new Set([...left].filter((id) => !right.has(id)));
      }
    }
  };
  const matches = [...evaluate(root)];
  const t2 = performance.now();
  phases.evaluate += t2 - t1;

  const [totals] = await db<{ messages: string; tokens: string }[]>`SELECT messages, tokens FROM postings_totals`;
  const t3 = performance.now();
  phases.totals += t3 - t2;

  const weights = bm25Weights({
    rows: Number(totals!.messages),
    tokens: Number(totals!.tokens),
    hits: perPhrase.map((f) => f.size),
  });
  const ranked = matches.map((id) => ({
    id,
    score: bm25Score(
      perPhrase.map((f) => f.get(id) ?? 0),
      lengths.get(id) ?? 0,
      weights,
    ),
  }));
  ranked.sort((a, b) => a.score - b.score || a.id - b.id);
  phases.rank += performance.now() - t3;
  phases.matches += matches.length;
  return ranked.slice(0, 20).map((r) => r.id);
}

const percentile = (xs: number[], p: number) =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(p * xs.length))] ?? 0;

/** The prototype on a new database of the Postgres server at `adminUrl`; dropped at the end. */
export async function benchPostingsSearch(source: string, adminUrl: string): Promise<PostingsSearchResult> {
  const notes: string[] = [];
  if (!fs.existsSync(source))
    return { rows: [], notes: [`postings on Postgres (prototype) skipped: ${source} is missing`] };
  const admin = postgres(adminUrl, { max: 1, onnotice: () => {}, connect_timeout: 5 });
  try {
    await admin`select 1`;
  } catch {
    await admin.end();
    return { rows: [], notes: ['postings on Postgres (prototype) skipped: the server is unreachable'] };
  }
  const name = `hsdb_bench_postings_${Date.now()}`;
  await admin.unsafe(`CREATE DATABASE "${name}" LC_CTYPE 'C.UTF-8' TEMPLATE template0`);
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  const db = postgres(url.toString(), { max: 1, onnotice: () => {} });
  try {
    await store(db, source, notes);
    const hermes = new Database(source, { readonly: true });
    const queries = buildQueries(hermes).filter((q) => q.sort === undefined);
    hermes.close();
    const phases: Phases = { fetch: 0, evaluate: 0, totals: 0, rank: 0, matches: 0 };
    const byClass = new Map<string, { times: number[]; same: number; under: number }>();
    for (const q of queries) {
      const plan = planSearch(q.query);
      if (plan.path !== 'words') continue;
      const c = byClass.get(q.cls) ?? { times: [], same: 0, under: 0 };
      byClass.set(q.cls, c);
      const t = performance.now();
      const ids = await search(db, plan.match, phases);
      c.times.push(performance.now() - t);
      if (q.expected !== null) {
        c.under++;
        if (JSON.stringify(ids) === JSON.stringify(q.expected)) c.same++;
      }
    }
    const total = phases.fetch + phases.evaluate + phases.totals + phases.rank;
    const share = (ms: number) => `${Math.round((100 * ms) / total)} %`;
    notes.push(
      `postings on Postgres (prototype): where the time went: fetching and decoding blocks ${share(phases.fetch)}, evaluating ${share(phases.evaluate)}, reading the totals ${share(phases.totals)}, ranking ${share(phases.rank)}; ${phases.matches.toLocaleString('en')} matches ranked in all`,
    );
    return {
      rows: [...byClass].map(([cls, c]) => ({
        case: cls,
        queries: c.times.length,
        p50: percentile(c.times, 0.5),
        p95: percentile(c.times, 0.95),
        sameTop20: c.same,
        underCap: c.under,
      })),
      notes,
    };
  } finally {
    await db.end();
    await admin.unsafe(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
    await admin.end();
  }
}
