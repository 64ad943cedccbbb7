/**
 * Word search over the Postgres postings (message_search_terms, migration 0005): one row per (word, message)
 * with the word's positions and the message's length, read index-only in id order.
 *
 * A parsed query compiles to one SQL relation per AST node, with columns `id`, `dl` (the message's length in
 * words) and `f<j>` for each phrase j of the node (allPhrases numbering): the messages the node matches and how
 * often each phrase occurs in them. Phrases FTS5 does not count for a row are absent (null): the right side of
 * a NOT, an OR branch that does not match the row. So the root relation holds FTS5's own phrase frequencies
 * (the instances FTS5 reports for the row) and BM25 needs nothing else.
 */
// size: one compiler of the query AST to SQL over the postings: each node kind's relation, the merged scans and the ranking share its state.
import { type SQL, sql } from 'drizzle-orm';
import { type Op, allRows, rows } from '../ops.js';
import { B, K1, allPhrases, bm25Score, bm25Weights } from '../../search/bm25.js';
import type { Phrase, QueryNode } from '../../search/query.js';
import type { QualifiedNames } from '../../sql/tables.js';

/** A prefix with more words than this is read as one key range instead of word by word. */
const MAX_PREFIX_TERMS = 1000;
/**
 * At most this many id-ordered scans are merged in one statement (planning a merge of hundreds costs more than
 * it saves); a prefix with more words is read over growing windows of the newest ids instead.
 */
const MAX_MERGED_SCANS = 32;

const NOTHING = (columns: number[]) =>
  sql`SELECT NULL::int8 AS id, NULL::int AS dl${columnList(columns, (j) => `, NULL::int AS f${j}`)} WHERE false`;
const f = (j: number) => sql.raw(`f${j}`);
/**
 * A list of frequency columns as one raw fragment: a query of n phrases has n columns in each of its n
 * branches, and n² Drizzle fragments take the event loop a second to compile at the query cap. Only column
 * names and NULLs built from phrase numbers go in, never a value.
 */
const columnList = (columns: number[], column: (j: number) => string) => sql.raw(columns.map(column).join(''));

/** The first string after every string that starts with `prefix` (byte order = code point order), if any. */
export function prefixEnd(prefix: string): string | null {
  const chars = [...prefix];
  const last = chars.pop()?.codePointAt(0);
  if (last === undefined || last >= 0x10ffff) return null;
  return chars.join('') + String.fromCodePoint(last + 1 === 0xd800 ? 0xe000 : last + 1);
}

/** The key range of the words starting with `prefix`, on the table aliased `alias`. */
function prefixRange(alias: string, prefix: string): SQL {
  const term = sql.raw(`${alias}.term`);
  const end = prefixEnd(prefix);
  return end === null
    ? sql`${term} >= ${prefix} AND starts_with(${term}, ${prefix})`
    : sql`${term} >= ${prefix} AND ${term} < ${end}`;
}

/** The words present that start with each prefix (null: more than MAX_PREFIX_TERMS), walked as a loose index scan. */
export function* prefixTerms(n: QualifiedNames, match: QueryNode): Op<Map<string, string[] | null>> {
  const prefixes = [
    ...new Set(
      allPhrases(match)
        .filter((p) => p.prefix && p.tokens.length > 0)
        .map((p) => p.tokens.at(-1)!),
    ),
  ];
  const out = new Map<string, string[] | null>();
  for (const prefix of prefixes) {
    const found = yield* rows<{ term: string }>(sql`WITH RECURSIVE t(term) AS (
        (SELECT x.term FROM ${n.messageSearchTerms} x WHERE ${prefixRange('x', prefix)} ORDER BY x.term LIMIT 1)
        UNION ALL
        SELECT (SELECT x.term FROM ${n.messageSearchTerms} x WHERE x.term > t.term AND ${prefixRange('x', prefix)} ORDER BY x.term LIMIT 1)
        FROM t WHERE t.term IS NOT NULL)
      SELECT term FROM t WHERE term IS NOT NULL LIMIT ${MAX_PREFIX_TERMS + 1}`);
    out.set(prefix, found.length > MAX_PREFIX_TERMS ? null : found.map((r) => r.term));
  }
  return out;
}

const textArray = (items: string[]) =>
  sql`ARRAY[${sql.join(
    items.map((i) => sql`${i}::text`),
    sql`, `,
  )}]::text[]`;

export interface Bm25Weights {
  idf: number[];
  avgdl: number;
}

interface Relation {
  sql: SQL;
  /** The phrases (allPhrases numbering) this relation has a frequency column for. */
  phrases: number[];
}

/**
 * Compiles a query to its relation and ranks it. The cap (+ 2, so a page can be checked complete) is pushed into a
 * node's scans when every node above it is an OR and no filter follows: then the root's newest matches are among
 * each such node's newest.
 */
export class PostingsCompiler {
  private readonly numbering = new Map<Phrase, number>();
  /** Every phrase number of the root, in order (each branch of an OR has a column for each). */
  private readonly everyPhrase: number[];
  /** While probing a window of the newest ids: every scan reads only ids above this one. */
  private bound: number | null = null;
  /** While checking given messages: every scan reads only these ids. */
  private among: number[] | null = null;
  /** While reading past a page: every scan reads only ids beyond this one (below it, or above it). */
  private beyond: { id: number; below: boolean } | null = null;
  /** The id order scans are merged and limited in: newest first, or oldest first. */
  private descending = true;
  /** How many matches a scan under an OR at the root reads at most (the most the statement can use). */
  private leafLimit: number;

  constructor(
    /** Our tables, qualified with the store's schema. */
    private readonly n: QualifiedNames,
    private readonly root: QueryNode,
    private readonly terms: Map<string, string[] | null>,
    private readonly cap: number,
  ) {
    for (const [j, p] of allPhrases(root).entries()) this.numbering.set(p, j);
    this.everyPhrase = [...this.numbering.values()];
    this.leafLimit = cap + 2;
  }

  /**
   * BM25's weights: rows and words from message_search_stats, and each phrase's document frequency from the
   * postings, counted only when the query has several distinct phrases (with one, it scales every score
   * alike and cannot change the order). `counted` says whether the statement counts (and so costs a scan).
   */
  private weightsQuery(): { sql: SQL; counted: boolean; decode(row: Record<string, unknown>): Bm25Weights } {
    const phrases = allPhrases(this.root);
    const keys = phrases.map((p) => `${p.prefix ? '*' : ''}${p.tokens.join(' ')}`);
    const distinct = [...new Set(keys)];
    const counted = distinct.length > 1;
    const index = new Map(distinct.map((k, i) => [k, i]));
    const hitColumns = counted
      ? sql`, ${sql.join(
          distinct.map((k, i) => sql`${this.documentCount(phrases[keys.indexOf(k)]!)} AS ${sql.raw(`h${i}`)}`),
          sql`, `,
        )}`
      : sql``;
    return {
      sql: sql`SELECT
          (SELECT COALESCE(sum(docs), 0) FROM ${this.n.messageSearchStats})::float8 AS docs,
          (SELECT COALESCE(sum(tokens), 0) FROM ${this.n.messageSearchStats})::float8 AS tokens ${hitColumns}`,
      counted,
      decode: (row) =>
        bm25Weights({
          rows: Math.max(1, Number(row.docs)),
          tokens: Number(row.tokens),
          hits: keys.map((k) => (counted ? Number(row[`h${index.get(k)}`]) : 1)),
        }),
    };
  }

  /** BM25's weights for the query (see weightsQuery). */
  *weights(): Op<Bm25Weights> {
    const w = this.weightsQuery();
    const [row] = yield* rows(w.sql);
    return w.decode(row!);
  }

  /**
   * One page of the query's matches ranked by BM25 (then id), ranking the newest `cap` matches when there are
   * more (`capped`). `filter` (on messages m and sessions s) applies before the cap. When the weights need
   * document counts (a scan per phrase), the first read of the candidates runs beside them and the page is
   * ranked here; otherwise Postgres ranks, so only the page's ids travel, whatever the number of candidates.
   */
  *rankedPage(filter: SQL | null, offset: number, count: number): Op<{ ids: number[]; capped: boolean }> {
    const limit = this.cap + 1;
    const w = this.weightsQuery();
    let weights: Bm25Weights | null = null;
    /** The weights, read beside `candidates` when they count, else first; then the candidates' rows. */
    const withWeights = function* (candidates: SQL): Op<Array<Record<string, unknown>> | null> {
      if (weights !== null) return null;
      if (!w.counted) {
        weights = w.decode((yield* rows(w.sql))[0]!);
        return null;
      }
      const [counts, found] = yield* allRows([w.sql, candidates]);
      weights = w.decode(counts![0]!);
      return found!;
    };
    const scans = filter === null ? this.branchCount(this.root) : null;
    if (scans !== null && scans > MAX_MERGED_SCANS) return yield* this.windowed(yield* this.weights(), offset, count);
    const branches = scans !== null && scans > 1 ? this.branches(this.root) : null;
    if (branches !== null && branches.length > 1) {
      // An OR of words and prefixes: Postgres merges the words' id-ordered scans and stops after `streamed` rows.
      for (let streamed = 4 * (limit + 1); streamed <= 64 * (limit + 1); streamed *= 4) {
        const merged = this.mergedPage(branches, streamed, this.cap + 2);
        const found = yield* withWeights(merged);
        // Complete when the page fills before the last message read (whose rows the LIMIT may cut), or when
        // the scans ran out before the LIMIT; otherwise read four times as many rows.
        if (found !== null) {
          if (found.length > limit || found.reduce((n, r) => n + Number(r.n), 0) < streamed)
            return this.rankHere(found, weights!, offset, count);
          continue;
        }
        const page = yield* this.ranked(merged, this.allColumns(), weights!, offset, count);
        if (page.groups > limit || page.streamed < streamed) return page;
      }
    }
    const top = this.node(this.root, filter === null);
    const columns = columnList(top.phrases, (j) => `, r.f${j}`);
    const join =
      filter === null
        ? sql``
        : sql`JOIN ${this.n.messages} m ON m.id = r.id JOIN ${this.n.sessions} s ON s.id = m.session_id WHERE true ${filter}`;
    const candidates = sql`SELECT r.id, r.dl${columns}, 1 AS n FROM (${top.sql}) r ${join} ORDER BY r.id DESC LIMIT ${limit}::int8`;
    const found = yield* withWeights(candidates);
    if (found !== null) return this.rankHere(found, weights!, offset, count);
    return yield* this.ranked(candidates, top.phrases, weights!, offset, count);
  }

  /** Ranks candidate rows (newest first) in TypeScript with bm25Score: the newest `cap` of them. */
  private rankHere(found: Array<Record<string, unknown>>, weights: Bm25Weights, offset: number, count: number) {
    const freq = new Array<number>(weights.idf.length);
    const scored = found.slice(0, this.cap).map((c) => {
      for (let j = 0; j < freq.length; j++) freq[j] = Number(c[`f${j}`] ?? 0);
      return { id: Number(c.id), score: bm25Score(freq, Number(c.dl ?? 0), weights) };
    });
    scored.sort((a, b) => a.score - b.score || a.id - b.id);
    return { ids: scored.slice(offset, offset + count).map((r) => r.id), capped: found.length > this.cap };
  }

  /**
   * Ranks candidate rows `{ id, dl, f…, n }` (newest first; `n`: rows they were read from): BM25 in FTS5's
   * order of operations on float8, which is the double arithmetic of bm25Score, so the order is the same.
   * Returns the page, how many candidates there were (`groups`) and how many rows they came from.
   */
  private *ranked(candidates: SQL, present: number[], weights: Bm25Weights, offset: number, count: number) {
    const has = new Set(present);
    const dl = sql`c.dl::float8`;
    const norm = sql`(${K1}::float8 * (${1 - B}::float8 + (${B}::float8 * ${dl}) / ${weights.avgdl}::float8))`;
    // A phrase FTS5 never counts here scores 0 for every row. The terms are summed by an aggregate in phrase
    // order (the additions of bm25Score, in its order) rather than nested one in another: an expression nested
    // hundreds deep overflows PGlite's stack, and it returns no rows then instead of an error.
    const counted = weights.idf.flatMap((idf, j) => (has.has(j) ? [{ idf, j }] : []));
    const score =
      counted.length === 0
        ? sql`0::float8`
        : sql`COALESCE((SELECT sum(t.idf * ((t.f * ${K1 + 1.0}::float8) / (t.f + ${norm})) ORDER BY t.k)
            FROM unnest(ARRAY[${sql.join(
              counted.map(({ j }) => sql`COALESCE(c.${f(j)}, 0)::float8`),
              sql`, `,
            )}], ${`{${counted.map(({ idf }) => String(idf)).join(',')}}`}::float8[]) WITH ORDINALITY AS t(f, idf, k)), 0::float8)`;
    const found = yield* rows<{ id: string | number | null; groups: string | number; streamed: string | number }>(sql`
      WITH c AS MATERIALIZED (${candidates}),
        meta AS (SELECT count(*) AS groups, COALESCE(sum(c.n), 0) AS streamed FROM c)
      SELECT p.id, meta.groups, meta.streamed FROM meta LEFT JOIN LATERAL (
        SELECT c.id, -1.0::float8 * ${score} AS score
        FROM (SELECT c.*, row_number() OVER (ORDER BY c.id DESC) AS k FROM c) c
        WHERE c.k <= ${this.cap}::int8 ORDER BY score, c.id LIMIT ${count}::int8 OFFSET ${offset}::int8) p ON true
      ORDER BY p.score, p.id`);
    const groups = Number(found[0]?.groups ?? 0);
    return {
      ids: found.filter((r) => r.id !== null).map((r) => Number(r.id)),
      capped: groups > this.cap,
      groups,
      streamed: Number(found[0]?.streamed ?? 0),
    };
  }

  private allColumns(): number[] {
    return this.everyPhrase;
  }

  /**
   * The newest `cap` + 1 matches read over windows of the newest ids, each scan reading only its ids above the
   * window's start; the window grows until it holds them or every id.
   * The matches above an id are exact whatever the query: a message matches by its own words.
   */
  private *windowed(weights: Bm25Weights, offset: number, count: number): Op<{ ids: number[]; capped: boolean }> {
    const limit = this.cap + 1;
    const [newest] = yield* rows<{ top: string | number }>(
      sql`SELECT COALESCE(max(id), 0) AS top FROM ${this.n.messages}`,
    );
    const top = Number(newest!.top);
    try {
      // A first look at the newest ids, counting only, sizes the window: matches are spread about evenly over ids.
      const sample = Math.ceil(limit / 2);
      this.bound = top - sample > 0 ? top - sample : null;
      const [seen] = yield* rows<{ n: string | number }>(
        sql`SELECT count(*) AS n FROM (${this.node(this.root, false).sql}) r`,
      );
      const density = Number(seen!.n) / sample;
      let window = density > 0 ? Math.ceil((1.25 * limit) / density) : 64 * limit;
      for (;;) {
        this.bound = top - window > 0 ? top - window : null;
        const relation = this.node(this.root, false);
        const columns = columnList(relation.phrases, (j) => `, r.f${j}`);
        const candidates = sql`SELECT r.id, r.dl${columns}, 1 AS n FROM (${relation.sql}) r ORDER BY r.id DESC LIMIT ${limit}::int8`;
        const page = yield* this.ranked(candidates, relation.phrases, weights, offset, count);
        if (page.groups >= limit || this.bound === null) return page;
        // Grow by the shortfall with a fifth to spare (matches are spread about evenly over ids), at least by a quarter.
        window = Math.ceil(window * Math.min(64, Math.max(1.25, (1.2 * limit) / Math.max(1, page.groups))));
      }
    } finally {
      this.bound = null;
    }
  }

  /**
   * The scans' limits on ids: above `bound` while probing a window, among `among` while checking messages,
   * beyond `beyond` while reading past a page.
   */
  private above(alias: string): SQL {
    const id = sql.raw(`${alias}.message_id`);
    const bound = this.bound === null ? sql`` : sql` AND ${id} > ${this.bound}::int8`;
    // One text parameter ('{1,2,3}'), however many ids: they are integers this code read from the database.
    const among = this.among === null ? sql`` : sql` AND ${id} = ANY (${`{${this.among.join(',')}}`}::int8[])`;
    const beyond =
      this.beyond === null ? sql`` : sql` AND ${id} ${sql.raw(this.beyond.below ? '<' : '>')} ${this.beyond.id}::int8`;
    return sql`${bound}${among}${beyond}`;
  }

  private order(): SQL {
    return sql.raw(this.descending ? 'DESC' : 'ASC');
  }

  /**
   * The first `n` matches in id order (newest first when `descending`) with their times (`t`, timestamptz
   * text); `filter` (on messages m and sessions s) applies first.
   */
  *firstById(filter: SQL | null, descending: boolean, n: number): Op<Array<{ id: number; t: string }>> {
    this.descending = descending;
    this.leafLimit = n + 1;
    try {
      const timed = (ids: SQL) =>
        sql`SELECT g.id, m.timestamp::text AS t, g.n FROM (${ids}) g JOIN ${this.n.messages} m ON m.id = g.id ORDER BY g.id ${this.order()}`;
      const scans = filter === null ? this.branchCount(this.root) : null;
      const branches = scans !== null && scans > 1 && scans <= MAX_MERGED_SCANS ? this.branches(this.root) : null;
      if (branches !== null && branches.length > 1 && n <= 100_000) {
        for (let streamed = 4 * (n + 1); streamed <= 64 * (n + 1); streamed *= 4) {
          const found = yield* rows<{ id: string | number; t: string; n: string | number }>(
            timed(this.mergedPage(branches, streamed, n + 1)),
          );
          if (found.length > n || found.reduce((k, r) => k + Number(r.n), 0) < streamed) {
            return found.slice(0, n).map((r) => ({ id: Number(r.id), t: r.t }));
          }
        }
      }
      const top = this.node(this.root, false);
      const join =
        filter === null
          ? sql``
          : sql`JOIN ${this.n.messages} m ON m.id = r.id JOIN ${this.n.sessions} s ON s.id = m.session_id WHERE true ${filter}`;
      const found = yield* rows<{ id: string | number; t: string }>(
        timed(sql`SELECT r.id, 1 AS n FROM (${top.sql}) r ${join} ORDER BY r.id ${this.order()} LIMIT ${n}::int8`),
      );
      return found.map((r) => ({ id: Number(r.id), t: r.t }));
    } finally {
      this.descending = true;
      this.leafLimit = this.cap + 2;
    }
  }

  /** Rows `{ id, dl, f… }` (see the class) of those of the messages `ids` that match. */
  *frequenciesOf(ids: number[]): Op<Array<Record<string, unknown>>> {
    if (ids.length === 0) return [];
    this.among = ids;
    try {
      return yield* rows(sql`SELECT r.* FROM (${this.node(this.root, false).sql}) r`);
    } finally {
      this.among = null;
    }
  }

  /**
   * The matches beyond message `id` in id order (below it when `below`) whose time is at least as new as `time`
   * (at least as old, when not `below`), `filter` applied: what a newest (oldest) page by id may have missed.
   */
  *matchesBeyond(filter: SQL | null, id: number, below: boolean, time: string): Op<Array<{ id: number; t: string }>> {
    this.beyond = { id, below };
    try {
      const top = this.node(this.root, false);
      const filtered = filter === null ? sql`` : sql`JOIN ${this.n.sessions} s ON s.id = m.session_id`;
      const found = yield* rows<{ id: string | number; t: string }>(
        sql`SELECT r.id, m.timestamp::text AS t FROM (${top.sql}) r JOIN ${this.n.messages} m ON m.id = r.id ${filtered}
          WHERE m.timestamp ${sql.raw(below ? '>=' : '<=')} ${time}::timestamptz ${filter ?? sql``}`,
      );
      return found.map((r) => ({ id: Number(r.id), t: r.t }));
    } finally {
      this.beyond = null;
    }
  }

  /** Which of the messages `ids` match (`filter` applied), with their times. */
  *matchesAmong(filter: SQL | null, ids: number[]): Op<Array<{ id: number; t: string }>> {
    if (ids.length === 0) return [];
    this.among = ids;
    try {
      const top = this.node(this.root, false);
      const filtered =
        filter === null ? sql`` : sql`JOIN ${this.n.sessions} s ON s.id = m.session_id WHERE true ${filter}`;
      const found = yield* rows<{ id: string | number; t: string }>(
        sql`SELECT r.id, m.timestamp::text AS t FROM (${top.sql}) r JOIN ${this.n.messages} m ON m.id = r.id ${filtered}`,
      );
      return found.map((r) => ({ id: Number(r.id), t: r.t }));
    } finally {
      this.among = null;
    }
  }

  /**
   * The id-ordered scans whose union is the root's matches (every column of the root in each), or null when
   * the root is not an OR of words and prefixes at heart: a word is one scan, a prefix one per word, any
   * other child of an OR one sorted relation.
   */
  /**
   * How many scans branches() would return (null: none, the root is not an OR of words and prefixes), counted
   * without building them: past MAX_MERGED_SCANS they are not used, and each has every phrase's column.
   */
  private branchCount(node: QueryNode): number | null {
    if (node.kind === 'or') return node.children.reduce((n, c) => n + (this.branchCount(c) ?? 1), 0);
    if (node.kind !== 'phrase' || node.tokens.length !== 1) return null;
    if (!node.prefix) return 1;
    return this.terms.get(node.tokens[0]!)?.length ?? 1;
  }

  private branches(node: QueryNode): SQL[] | null {
    const all = this.everyPhrase;
    const row = (own: number) =>
      columnList(all, (j) => (j === own ? `, cardinality(positions) AS f${j}` : `, NULL::int AS f${j}`));
    const scan = (j: number, term: string) =>
      sql`(SELECT message_id AS id, doc_length AS dl${row(j)} FROM ${this.n.messageSearchTerms} WHERE term = ${term} ORDER BY message_id ${this.order()})`;
    if (node.kind === 'or') {
      const parts = node.children.map((c) => this.branches(c) ?? [this.sortedChild(c, all)]);
      return parts.flat();
    }
    if (node.kind !== 'phrase' || node.tokens.length !== 1) return null;
    const j = this.numbering.get(node)!;
    if (!node.prefix) return [scan(j, node.tokens[0]!)];
    const words = this.terms.get(node.tokens[0]!);
    return words ? words.map((w) => scan(j, w)) : [this.sortedChild(node, all)];
  }

  private sortedChild(node: QueryNode, all: number[]): SQL {
    const relation = this.node(node, true);
    const own = new Set(relation.phrases);
    const columns = columnList(all, (j) => (own.has(j) ? `, c.f${j}` : `, NULL::int AS f${j}`));
    return sql`(SELECT c.id, c.dl${columns} FROM (${relation.sql}) c ORDER BY c.id ${this.order()})`;
  }

  /**
   * The first `streamed` rows of the merged scans, grouped per message as they come (Postgres stops once
   * `groups` messages are out): each message's length, phrase frequencies and rows read (`n`).
   */
  private mergedPage(branches: SQL[], streamed: number, groups: number): SQL {
    const all = this.everyPhrase;
    const sums = columnList(all, (j) => `, sum(s.f${j})::int AS f${j}`);
    return sql`SELECT s.id, max(s.dl) AS dl${sums}, count(*) AS n FROM (
        SELECT * FROM (${sql.join(branches, sql` UNION ALL `)}) u ORDER BY u.id ${this.order()} LIMIT ${streamed}::int8) s
      GROUP BY s.id ORDER BY s.id ${this.order()} LIMIT ${groups}::int8`;
  }

  /** How many messages contain the phrase anywhere (BM25's document frequency). */
  documentCount(phrase: Phrase): SQL {
    if (phrase.tokens.length === 1 && !phrase.prefix) {
      return sql`(SELECT count(*) FROM ${this.n.messageSearchTerms} WHERE term = ${phrase.tokens[0]!})`;
    }
    return sql`(SELECT count(*) FROM (${this.phrase(phrase, 0, false).sql}) d)`;
  }

  private node(node: QueryNode, limitable: boolean): Relation {
    switch (node.kind) {
      case 'phrase':
        return this.phrase(node, this.numbering.get(node)!, limitable);
      case 'and': {
        const children = node.children.map((c) => this.node(c, false));
        const phrases = children.flatMap((c) => c.phrases);
        const columns = children.flatMap((c, k) => c.phrases.map((j) => `, c${k}.f${j}`));
        const from = sql.join(
          children.map((c, k) =>
            k === 0 ? sql`(${c.sql}) c0` : sql`JOIN (${c.sql}) ${sql.raw(`c${k}`)} ON ${sql.raw(`c${k}`)}.id = c0.id`,
          ),
          sql` `,
        );
        return { sql: sql`SELECT c0.id, c0.dl${sql.raw(columns.join(''))} FROM ${from}`, phrases };
      }
      case 'or': {
        // Each child's rows as (id, dl, phrase, frequency), one per phrase of the child, then one column per
        // phrase again: padding every child to every phrase's column made a statement quadratic in the phrases.
        const children = node.children.map((c) => this.node(c, limitable));
        const phrases = children.flatMap((c) => c.phrases);
        const long = children.map((c) => {
          const pairs = c.phrases.map((j) => `(${j}, b.f${j})`).join(', ');
          return sql`SELECT b.id, b.dl, v.j, v.f FROM (${c.sql}) b CROSS JOIN LATERAL (VALUES ${sql.raw(pairs)}) v(j, f)`;
        });
        const columns = columnList(phrases, (j) => `, max(u.f) FILTER (WHERE u.j = ${j}) AS f${j}`);
        return {
          sql: sql`SELECT u.id, max(u.dl) AS dl${columns} FROM (${sql.join(long, sql` UNION ALL `)}) u GROUP BY u.id`,
          phrases,
        };
      }
      case 'not': {
        const left = this.node(node.left, false);
        const right = this.node(node.right, false);
        const columns = columnList(left.phrases, (j) => `, l.f${j}`);
        return {
          sql: sql`SELECT l.id, l.dl${columns} FROM (${left.sql}) l WHERE NOT EXISTS (SELECT 1 FROM (${right.sql}) r WHERE r.id = l.id)`,
          phrases: left.phrases,
        };
      }
    }
  }

  private phrase(phrase: Phrase, j: number, limitable: boolean): Relation {
    const tokens = phrase.tokens;
    const newest = limitable ? sql` ORDER BY id ${this.order()} LIMIT ${this.leafLimit}::int8` : sql``;
    if (tokens.length === 0) return { sql: NOTHING([j]), phrases: [j] };
    if (tokens.length === 1 && !phrase.prefix) {
      return {
        sql: sql`SELECT * FROM (SELECT x.message_id AS id, x.doc_length AS dl, cardinality(x.positions) AS ${f(j)}
          FROM ${this.n.messageSearchTerms} x WHERE x.term = ${tokens[0]!}${this.above('x')}) w${newest}`,
        phrases: [j],
      };
    }
    const prefixWords = phrase.prefix ? this.terms.get(tokens.at(-1)!) : undefined;
    if (prefixWords !== undefined && prefixWords !== null && prefixWords.length === 0)
      return { sql: NOTHING([j]), phrases: [j] };
    if (tokens.length === 1) {
      // A prefix: each word's newest matches when the cap applies here, else the whole key range, summed per message.
      const prefix = tokens[0]!;
      const newestOfEach = limitable
        ? sql` ORDER BY x.message_id ${this.order()} LIMIT ${this.leafLimit}::int8`
        : sql``;
      const words = prefixWords
        ? sql`SELECT p.* FROM unnest(${textArray(prefixWords)}) AS k(term) CROSS JOIN LATERAL (
            SELECT x.message_id AS id, x.doc_length AS dl, cardinality(x.positions) AS n FROM ${this.n.messageSearchTerms} x
            WHERE x.term = k.term${this.above('x')}${newestOfEach}) p`
        : sql`SELECT x.message_id AS id, x.doc_length AS dl, cardinality(x.positions) AS n FROM ${this.n.messageSearchTerms} x
            WHERE ${prefixRange('x', prefix)}${this.above('x')}`;
      return {
        sql: sql`SELECT * FROM (SELECT id, max(dl) AS dl, sum(n)::int AS ${f(j)} FROM (${words}) p GROUP BY id) w${newest}`,
        phrases: [j],
      };
    }
    // Two or more words: every word's postings of the same message, and the starts at which each word follows.
    const alias = (i: number) => sql.raw(`a${i}`);
    const joins: SQL[] = [];
    for (let i = 1; i < tokens.length; i++) {
      const last = i === tokens.length - 1 && phrase.prefix;
      if (!last) {
        joins.push(
          sql`JOIN ${this.n.messageSearchTerms} ${alias(i)} ON ${alias(i)}.message_id = a0.message_id AND ${alias(i)}.term = ${tokens[i]!}`,
        );
      } else if (prefixWords) {
        joins.push(sql`CROSS JOIN LATERAL (SELECT array_agg(p) AS positions FROM ${this.n.messageSearchTerms} x, unnest(x.positions) p
          WHERE x.term = ANY (${textArray(prefixWords)}) AND x.message_id = a0.message_id) ${alias(i)}`);
      } else {
        joins.push(sql`JOIN (SELECT x.message_id, array_agg(p) AS positions FROM ${this.n.messageSearchTerms} x, unnest(x.positions) p
          WHERE ${prefixRange('x', tokens[i]!)} GROUP BY x.message_id) ${alias(i)} ON ${alias(i)}.message_id = a0.message_id`);
      }
    }
    const follows = sql.join(
      tokens.slice(1).map((_, k) => sql`p + ${k + 1} = ANY (${alias(k + 1)}.positions)`),
      sql` AND `,
    );
    const first = sql`a0.term = ${tokens[0]!}${this.above('a0')}`;
    return {
      sql: sql`SELECT * FROM (SELECT a0.message_id AS id, a0.doc_length AS dl, n.n AS ${f(j)}
        FROM ${this.n.messageSearchTerms} a0 ${sql.join(joins, sql` `)}
        CROSS JOIN LATERAL (SELECT count(*)::int AS n FROM unnest(a0.positions) p WHERE ${follows}) n
        WHERE ${first} AND n.n > 0) w${newest}`,
      phrases: [j],
    };
  }
}
