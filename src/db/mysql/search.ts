/**
 * Message search on MySQL/MariaDB. InnoDB's FULLTEXT index (migration 0001, over message_search) cuts words
 * differently from FTS5's unicode61 (it drops words shorter than innodb_ft_min_token_size, splits CJK only at
 * spaces, folds by collation), so here it only narrows: each query is turned into a FULLTEXT boolean query
 * that every message FTS5 would match also matches (or, where it cannot be, a LIKE scan), and each candidate
 * is then judged by FTS5's own rules in TypeScript (rowEvaluatorSteps: the phrases, operators, prefixes and
 * trigram substrings of the query). Relevance is FTS5's bm25 over the same figures: the row's length in
 * unicode61 tokens, the corpus' rows and tokens (message_search.token_count, migration 0004), and each
 * phrase's document count. What differs from SQLite is named in docs/schema.md (MySQL/MariaDB) and in
 * test/mysql/search.test.ts.
 */
// size: MySQL's search is one closure over the engine's spelling: narrowing, FTS5's verdict and bm25 ranking read the same query plan.
import { type SQL, sql } from 'drizzle-orm';
import type { MatchPath, SearchOrder, SearchStatements } from '../dialect.js';
import { type Op, changes, exec, rows } from '../ops.js';
import { type CorpusStats, allPhrases, bm25Score, bm25Weights } from '../../search/bm25.js';
import { type RowEvaluation, rowEvaluatorSteps, tokenCount } from '../../search/fts5-match.js';
import type { Phrase, QueryNode } from '../../search/query.js';
import { SNIPPET_HEAD_READ_CHARS } from '../../search/snippet.js';
import { containsPattern } from '../../sql/like.js';
import type { TableNames } from '../../sql/tables.js';

/** What the MySQL dialect lends its search statements. */
export interface MysqlSearchHelpers {
  /** The binary string of `expr` with ASCII letters (only) lower-cased, as Hermes' LIKE folds. */
  asciiLower(expr: SQL): SQL;
  /** Hermes' LIKE of an `asciiLower`ed expression (`\` as the escape character). */
  likeLowered(lowered: SQL, pattern: string): SQL;
  /** Content as searchable text for Hermes' LIKE path: plain text, or the JSON of structured content. */
  contentText(alias: string): SQL;
}

const HIT_COLUMNS = sql`m.id, m.session_id, m.role, m.timestamp, m.tool_name, s.source, s.model, s.started_at AS session_started`;
/** Rows whose content is at most this many bytes send their whole searchable text for their snippet. */
const WHOLE_TEXT_MAX_BYTES = 65_536;
/** At most this many candidates, and about this many characters of their text, are read and judged per read. */
const JUDGE_ROWS = 512;
const JUDGE_CHARS = 1_000_000;
/** Messages whose token count is filled per statement (after writes that bypassed the store, or an import). */
const COUNT_CHUNK = 256;
/**
 * Work in TypeScript between two statements runs at most about this long: then a round trip (`DO 0`) lets the
 * event loop run before it goes on. Judging a read of rows against a long query takes far longer in one go.
 */
const SLICE_MS = 20;
/**
 * Per phrase, at most this many candidates are judged for bm25's document count (more: a sample of this many).
 * A sample of 1,000 changed 2 relevance pages of the 24,000-message Hermes oracle (search-oracle.test.ts).
 */
const JUDGED_COUNT_MAX = 20_000;

/**
 * The text FTS5 indexes for a message (Hermes' trigger: content, tool name and tool calls joined by spaces,
 * NULL as empty), as migration 0001's trigger writes it into message_search.
 */
const searchText = (a: string) =>
  sql.raw(`CONVERT(CONCAT(
    COALESCE(${a}.content, '') COLLATE utf8mb4_bin, ' ',
    COALESCE(CONVERT(${a}.tool_name USING utf8mb4) COLLATE utf8mb4_bin, ''), ' ',
    COALESCE(${a}.tool_calls, '') COLLATE utf8mb4_bin) USING utf8mb4)`);
/** The same text compared as FULLTEXT compares it: any case, accents folded (a superset of FTS5's folding). */
const foldedSearchText = (a: string) => sql`(${searchText(a)} COLLATE utf8mb4_unicode_ci)`;

/** What InnoDB's FULLTEXT index of this server holds: token lengths, and the stopwords it leaves out. */
interface TokenBounds {
  /** innodb_ft_min_token_size / innodb_ft_max_token_size. */
  min: number;
  max: number;
  /**
   * MySQL ignores migration 0001's MariaDB-only clause, so its index leaves out InnoDB's default stopwords:
   * they narrow nothing there. Empty on MariaDB, whose index has none.
   */
  stopwords: ReadonlySet<string>;
}

/**
 * Whether InnoDB indexes a unicode61 token as the same word: letters and digits of the Basic Multilingual Plane
 * only (InnoDB treats other planes' characters as separators), of a length InnoDB keeps.
 */
function indexable(token: string, bounds: TokenBounds): boolean {
  if (!/^[\p{L}\p{N}]+$/u.test(token)) return false;
  const chars = [...token];
  return (
    chars.length >= bounds.min &&
    chars.length <= bounds.max &&
    chars.every((c) => c.codePointAt(0)! < 0x10000) &&
    !bounds.stopwords.has(token)
  );
}

/**
 * A FULLTEXT boolean-mode expression matched by every message in which FTS5 finds `node`, or null when there
 * is none narrower than every message (a phrase with no indexable word, under an OR). Phrases need each of
 * their indexable words (adjacency is judged later); AND needs its narrowable children; NOT needs its left.
 */
export function fulltextNarrowing(node: QueryNode, bounds: TokenBounds): string | null {
  switch (node.kind) {
    case 'phrase': {
      const words = node.tokens
        .map((t, i) => (indexable(t, bounds) ? (node.prefix && i === node.tokens.length - 1 ? `${t}*` : t) : null))
        .filter((w): w is string => w !== null);
      return words.length === 0 ? null : `(${words.map((w) => `+${w}`).join(' ')})`;
    }
    case 'and': {
      const parts = node.children.map((c) => fulltextNarrowing(c, bounds)).filter((p): p is string => p !== null);
      return parts.length === 0 ? null : `(${parts.map((p) => `+${p}`).join(' ')})`;
    }
    case 'or': {
      const parts = node.children.map((c) => fulltextNarrowing(c, bounds));
      return parts.some((p) => p === null) ? null : `(${parts.join(' ')})`;
    }
    case 'not':
      return fulltextNarrowing(node.left, bounds);
  }
}

/** The same narrowing as LIKE conditions over the folded search text (a scan): every phrase can be narrowed so. */
function likeNarrowing(node: QueryNode, path: MatchPath): SQL {
  switch (node.kind) {
    case 'phrase': {
      // Words: each (folded) token; substrings: the phrase as written, when FTS5's trigram table can match it.
      const parts = path === 'words' ? node.tokens : node.tokens.length > 0 ? [node.text] : [];
      if (parts.length === 0) return sql`FALSE`;
      return sql`(${sql.join(
        parts.map((p) => sql`${foldedSearchText('m')} LIKE ${containsPattern(p)} ESCAPE '\\\\'`),
        sql` AND `,
      )})`;
    }
    case 'and':
      return sql`(${sql.join(
        node.children.map((c) => likeNarrowing(c, path)),
        sql` AND `,
      )})`;
    case 'or':
      return sql`(${sql.join(
        node.children.map((c) => likeNarrowing(c, path)),
        sql` OR `,
      )})`;
    case 'not':
      return likeNarrowing(node.left, path);
  }
}

interface Candidate {
  id: number;
  /** Characters of its searchable text (message_search.char_count): how much a read of it brings. */
  chars: number;
  /** Epoch seconds (the connection's time zone is UTC). */
  t: number;
}

interface Judged extends Candidate {
  ev: RowEvaluation;
}

const idList = (ids: readonly number[]) =>
  sql.join(
    ids.map((id) => sql`${id}`),
    sql`, `,
  );

const mode = (path: MatchPath) => (path === 'words' ? 'words' : 'substrings');

/** A stretch of TypeScript work between statements: `breathe()` hands the event loop a turn once SLICE_MS have run. */
function slice() {
  let started = performance.now();
  return {
    *breathe(): Op<void> {
      if (performance.now() - started < SLICE_MS) return;
      yield* exec(sql`DO 0`);
      started = performance.now();
    },
  };
}

/** The end of the read that starts at `from`: up to `rows` candidates and JUDGE_CHARS characters (at least one). */
function batchEnd(list: readonly Candidate[], from: number, rows = JUDGE_ROWS): number {
  let end = from;
  let chars = 0;
  while (end < list.length && end - from < rows && (end === from || chars + list[end]!.chars <= JUDGE_CHARS)) {
    chars += list[end]!.chars;
    end++;
  }
  return end;
}

/** MySQL's search statements, with the token-count upkeep that the dialect and the search repository drive. */
export interface MysqlSearchStatements extends SearchStatements {
  catchUp(): Op<boolean>;
  /**
   * Fill the token counts of messages with `after < id <= last` that lack them, a piece per call: the last id
   * covered, or null when none was left (the import's deferred build).
   */
  fillRange(after: number, last: number): Op<number | null>;
}

/**
 * The server's refusals of a write: no UPDATE privilege (1142, 1143), a read-only server or transaction (1290,
 * 1792). A search by such a user counts tokens without storing them.
 */
const WRITE_REFUSED = new Set([1142, 1143, 1290, 1792]);
const writeRefused = (error: unknown) => WRITE_REFUSED.has((error as { errno?: unknown } | null)?.errno as number);

/** The search statements over our tables. */
// size: the search slots of MySQL in one closure, as the other engines' search files are: they share its helpers.
export function mysqlSearch(t: TableNames, helpers: MysqlSearchHelpers): MysqlSearchStatements {
  let bounds: TokenBounds | null = null;
  /** False once the server refused to store token counts (a user with SELECT only): they are counted here. */
  let countsStored = true;
  /** Token counts of rows whose count is not stored, with the length they were counted at. */
  let unstored = new Map<number, { chars: number; n: number }>();

  function* tokenBounds(): Op<TokenBounds> {
    if (bounds === null) {
      const [row] = yield* rows<{ min: unknown; max: unknown; version: unknown }>(
        sql`SELECT @@innodb_ft_min_token_size AS min, @@innodb_ft_max_token_size AS max, VERSION() AS version`,
      );
      const stopwords = /mariadb/i.test(String(row!.version))
        ? []
        : (yield* rows<{ value: unknown }>(sql`SELECT value FROM INFORMATION_SCHEMA.INNODB_FT_DEFAULT_STOPWORD`)).map(
            (r) => String(r.value),
          );
      bounds = { min: Number(row!.min), max: Number(row!.max), stopwords: new Set(stopwords) };
    }
    return bounds;
  }

  /** Every message the query may match (a superset of FTS5's matches), with the filters applied. */
  function* candidates(path: MatchPath, match: QueryNode, where: SQL | null): Op<Candidate[]> {
    const narrowing = path === 'words' ? fulltextNarrowing(match, yield* tokenBounds()) : null;
    const sessions = where === null ? sql`` : sql`JOIN ${t.sessions} s ON s.id = m.session_id`;
    const found = yield* rows<{ id: unknown; t: unknown; chars: unknown }>(
      narrowing !== null
        ? sql`SELECT m.id, UNIX_TIMESTAMP(m.timestamp) AS t, ms.char_count AS chars FROM message_search ms
            JOIN ${t.messages} m ON m.id = ms.message_id ${sessions}
            WHERE MATCH(ms.search_text) AGAINST (${`+${narrowing}`} IN BOOLEAN MODE) ${where ?? sql``}`
        : sql`SELECT m.id, UNIX_TIMESTAMP(m.timestamp) AS t, ms.char_count AS chars FROM ${t.messages} m
            JOIN message_search ms ON ms.message_id = m.id ${sessions}
            WHERE ${likeNarrowing(match, path)} ${where ?? sql``}`,
    );
    return found.map((r) => ({ id: Number(r.id), t: Number(r.t), chars: Number(r.chars) }));
  }

  /** FTS5's verdict on each candidate, read a few rows at a time (a message may be megabytes long). */
  function* judge(path: MatchPath, match: QueryNode, batch: readonly Candidate[]): Op<Judged[]> {
    if (batch.length === 0) return [];
    const texts = yield* rows<{ id: unknown; text: unknown }>(
      sql`SELECT m.id, ${searchText('m')} AS text FROM ${t.messages} m WHERE m.id IN (${idList(batch.map((c) => c.id))})`,
    );
    const clock = slice();
    const byId = new Map(texts.map((r) => [Number(r.id), String(r.text ?? '')]));
    const evaluateRow = rowEvaluatorSteps(match, mode(path));
    const out: Judged[] = [];
    for (const c of batch) {
      const text = byId.get(c.id);
      if (text === undefined) continue; // deleted since the candidates were read
      // A megabyte row against a long query takes a long time to judge: the loop runs between its steps.
      const steps = evaluateRow(text);
      let step = steps.next();
      for (; !step.done; step = steps.next()) yield* clock.breathe();
      if (step.value.match) out.push({ ...c, ev: step.value });
      yield* clock.breathe();
    }
    return out;
  }

  /**
   * How many messages of the whole table contain `phrase` (bm25's per-phrase document count), as FTS5 counts:
   * FULLTEXT's matches, where the collation cannot have equated another word (an ASCII word in an ASCII text:
   * no accents, ligatures, full-width letters or ß there), and the other candidates judged. Past
   * JUDGED_COUNT_MAX other candidates, an evenly spaced sample of that many is judged and the share scaled
   * (docs/schema.md: a named difference; a count off by a few percent moves bm25's IDF by a fraction of that).
   */
  function* documentCount(path: MatchPath, phrase: Phrase): Op<number> {
    const b = yield* tokenBounds();
    if (phrase.tokens.length === 0) return 0;
    const judgeAll = function* (found: Candidate[]): Op<number> {
      const step = Math.max(1, found.length / JUDGED_COUNT_MAX);
      const sample =
        step === 1 ? found : Array.from({ length: JUDGED_COUNT_MAX }, (_, k) => found[Math.floor(k * step)]!);
      let n = 0;
      for (let i = 0, j = 0; i < sample.length; i = j) {
        j = batchEnd(sample, i);
        n += (yield* judge(path, phrase, sample.slice(i, j))).length;
      }
      return step === 1 ? n : Math.round((n * found.length) / sample.length);
    };
    const whole =
      path === 'words' &&
      phrase.tokens.every((tok) => indexable(tok, b)) &&
      !(phrase.prefix && phrase.tokens.length > 1);
    // A substring, or a phrase with a short word: every message its narrowing finds, judged.
    if (!whole) return yield* judgeAll(yield* candidates(path, phrase, null));
    // FULLTEXT finds the phrase itself here: InnoDB's words are unicode61's once '_' is a space (migration 0004).
    const q =
      phrase.tokens.length === 1 ? `+${phrase.tokens[0]}${phrase.prefix ? '*' : ''}` : `"${phrase.tokens.join(' ')}"`;
    const ascii = phrase.tokens.every((tok) => /^[0-9a-z]+$/.test(tok));
    const [counts] = yield* rows<{ exact: unknown; other: unknown }>(
      sql`SELECT COALESCE(SUM(ascii_only), 0) AS exact, COALESCE(SUM(1 - ascii_only), 0) AS other FROM message_search
        WHERE MATCH(search_text) AGAINST (${q} IN BOOLEAN MODE)`,
    );
    const exact = ascii ? Number(counts!.exact) : 0;
    const other = Number(counts!.other) + (ascii ? 0 : Number(counts!.exact));
    if (other === 0) return exact;
    const found = yield* rows<{ id: unknown; chars: unknown }>(
      sql`SELECT message_id AS id, char_count AS chars FROM message_search
        WHERE MATCH(search_text) AGAINST (${q} IN BOOLEAN MODE) ${ascii ? sql`AND NOT ascii_only` : sql``}`,
    );
    return exact + (yield* judgeAll(found.map((r) => ({ id: Number(r.id), t: 0, chars: Number(r.chars) }))));
  }

  /**
   * bm25's weights: the corpus' rows and tokens (unicode61 words, or trigrams: a text of n characters has n - 2),
   * and each phrase's document count when the query has several.
   */
  function* weights(path: MatchPath, match: QueryNode) {
    const [totals] = yield* rows<{ docs: unknown; counted: unknown; tokens: unknown }>(
      path === 'words'
        ? sql`SELECT COUNT(*) AS docs, COUNT(token_count) AS counted, COALESCE(SUM(token_count), 0) AS tokens FROM message_search`
        : sql`SELECT COUNT(*) AS docs, COUNT(*) AS counted, COALESCE(SUM(GREATEST(char_count - 2, 0)), 0) AS tokens FROM message_search`,
    );
    const docs = Number(totals!.docs);
    const counted = Number(totals!.counted);
    // Rows written after the counts were filled have none yet: the average is taken over those that do, or,
    // where this user cannot store counts, the missing ones are counted here.
    const tokens =
      path === 'words' && !countsStored
        ? Number(totals!.tokens) + (yield* unstoredTokens())
        : counted === 0
          ? 0
          : (Number(totals!.tokens) / counted) * docs;
    const phrases = allPhrases(match);
    const keys = phrases.map((p) => `${p.prefix ? '*' : ''}${p.tokens.join(' ')}`);
    const distinct = [...new Set(keys)];
    // With one distinct phrase its IDF scales every score alike: the order needs no count.
    const counts = new Map<string, number>();
    if (distinct.length > 1)
      for (const k of distinct) counts.set(k, yield* documentCount(path, phrases[keys.indexOf(k)]!));
    const stats: CorpusStats = { rows: docs, tokens, hits: keys.map((k) => counts.get(k) ?? 0) };
    return bm25Weights(stats);
  }

  /** The page's hit rows, in the order of `ids`. */
  function* hitRows(ids: number[]): Op<Array<Record<string, unknown>>> {
    if (ids.length === 0) return [];
    const found = yield* rows(sql`SELECT ${HIT_COLUMNS} FROM ${t.messages} m JOIN ${t.sessions} s ON s.id = m.session_id
      WHERE m.id IN (${idList(ids)})`);
    const byId = new Map(found.map((r) => [Number(r.id), r]));
    return ids.map((id) => byId.get(id)).filter((r) => r !== undefined);
  }

  /** Relevance: bm25 over every match, or over the newest `cap` when there are more. */
  function* rankedPage(
    path: MatchPath,
    match: QueryNode,
    found: Candidate[],
    offset: number,
    end: number,
    cap: number,
  ) {
    found.sort((a, b) => b.id - a.id);
    const matched: Judged[] = [];
    for (let i = 0, j = 0; i < found.length && matched.length <= cap; i = j) {
      j = batchEnd(found, i);
      matched.push(...(yield* judge(path, match, found.slice(i, j))));
    }
    const capped = matched.length > cap;
    const w = yield* weights(path, match);
    const scored = matched.slice(0, cap).map((j) => ({ id: j.id, score: bm25Score(j.ev.freq, j.ev.length, w) }));
    scored.sort((a, b) => a.score - b.score || a.id - b.id);
    return { ids: scored.slice(offset, end).map((s) => s.id), capped };
  }

  /**
   * By time: matches are judged in time order until the page is full, then those sharing the last one's time
   * (a group of equal times reaching past the page's end is read whole), equal times by bm25 then id, as
   * Hermes' ORDER BY orders them.
   */
  function* timedPage(
    path: MatchPath,
    match: QueryNode,
    found: Candidate[],
    order: SearchOrder,
    offset: number,
    end: number,
  ) {
    const sign = order === 'oldest' ? 1 : -1;
    found.sort((a, b) => sign * (a.t - b.t) || a.id - b.id);
    const matched: Judged[] = [];
    let i = 0;
    while (i < found.length && matched.length < end) {
      // Most candidates match: read about twice what the page still needs.
      const j = batchEnd(found, i, Math.min(JUDGE_ROWS, Math.max(32, 2 * (end - matched.length))));
      matched.push(...(yield* judge(path, match, found.slice(i, j))));
      i = j;
    }
    const edge = matched.length >= end && end > 0 ? matched[end - 1]!.t : null;
    if (edge !== null) {
      const rest: Candidate[] = [];
      for (; i < found.length && found[i]!.t === edge; i++) rest.push(found[i]!);
      for (let k = 0, j = 0; k < rest.length; k = j) {
        j = batchEnd(rest, k);
        matched.push(...(yield* judge(path, match, rest.slice(k, j))));
      }
    }
    const scores = new Map<number, number>();
    const perTime = new Map<number, number>();
    for (const j of matched) perTime.set(j.t, (perTime.get(j.t) ?? 0) + 1);
    if ([...perTime.values()].some((n) => n > 1)) {
      const w = yield* weights(path, match);
      for (const j of matched) if (perTime.get(j.t)! > 1) scores.set(j.id, bm25Score(j.ev.freq, j.ev.length, w));
    }
    matched.sort((a, b) => sign * (a.t - b.t) || (scores.get(a.id) ?? 0) - (scores.get(b.id) ?? 0) || a.id - b.id);
    return matched.slice(offset, end).map((j) => j.id);
  }

  /**
   * The tokens of every row whose count is not stored, counted in TypeScript (each row once while its length
   * stays the same): what a user who may not store them adds to the stored counts' sum.
   */
  function* unstoredTokens(): Op<number> {
    const pending = yield* rows<{ id: unknown; chars: unknown }>(
      sql`SELECT message_id AS id, char_count AS chars FROM message_search WHERE token_count IS NULL`,
    );
    const known = new Map<number, { chars: number; n: number }>();
    const missing: Candidate[] = [];
    for (const r of pending) {
      const id = Number(r.id);
      const chars = Number(r.chars);
      const seen = unstored.get(id);
      if (seen !== undefined && seen.chars === chars) known.set(id, seen);
      else missing.push({ id, t: 0, chars });
    }
    for (let i = 0, j = 0; i < missing.length; i = j) {
      j = batchEnd(missing, i);
      const texts = yield* rows<{ id: unknown; chars: unknown; text: unknown }>(
        sql`SELECT message_id AS id, char_count AS chars, search_text AS text FROM message_search
          WHERE message_id IN (${idList(missing.slice(i, j).map((c) => c.id))})`,
      );
      const clock = slice();
      for (const r of texts) {
        known.set(Number(r.id), { chars: Number(r.chars), n: tokenCount(String(r.text ?? '')) });
        yield* clock.breathe();
      }
    }
    // Rows since deleted, or whose count a writer stored, are forgotten.
    unstored = known;
    let n = 0;
    for (const v of known.values()) n += v.n;
    return n;
  }

  /** Fill token_count for up to COUNT_CHUNK messages that lack it (and match `range`): how many were filled. */
  function* fillTokenCounts(range: SQL): Op<Array<{ id: number }>> {
    const pending = yield* rows<{ id: unknown; text: unknown }>(
      sql`SELECT message_id AS id, search_text AS text FROM message_search
        WHERE token_count IS NULL ${range} ORDER BY message_id LIMIT ${COUNT_CHUNK}`,
    );
    if (pending.length === 0) return [];
    const clock = slice();
    const counted: Array<{ id: number; n: number }> = [];
    for (const r of pending) {
      counted.push({ id: Number(r.id), n: tokenCount(String(r.text ?? '')) });
      yield* clock.breathe();
    }
    yield* changes(
      sql`UPDATE message_search SET token_count = CASE message_id ${sql.join(
        counted.map((c) => sql`WHEN ${c.id} THEN ${c.n}`),
        sql` `,
      )} END WHERE message_id IN (${idList(counted.map((c) => c.id))})`,
    );
    return counted;
  }

  return {
    *page(path, match, where, order, limit, offset, cap) {
      const end = Math.min(Number.MAX_SAFE_INTEGER, offset + limit);
      const found = yield* candidates(path, match, where);
      if (order === 'relevance') {
        const page = yield* rankedPage(path, match, found, offset, end, cap);
        return { rows: yield* hitRows(page.ids), capped: page.capped };
      }
      const ids = yield* timedPage(path, match, found, order, offset, end);
      return { rows: yield* hitRows(ids), capped: false };
    },
    // The read only fetches text (snippets are computed in TypeScript): one read for the page.
    pageTextChunk: 100,
    // Heads are read by the server, off the event loop.
    contextTextChunk: 100,
    pageText: (_path, _match, ids) => {
      // A big row sends only the head of its content, followed by the tool columns as in the indexed text.
      const head = sql.raw(`CONVERT(CONCAT(
          LEFT(m.content, ${SNIPPET_HEAD_READ_CHARS}) COLLATE utf8mb4_bin, ' ',
          COALESCE(CONVERT(m.tool_name USING utf8mb4) COLLATE utf8mb4_bin, ''), ' ',
          COALESCE(m.tool_calls, '') COLLATE utf8mb4_bin) USING utf8mb4)`);
      return sql`SELECT m.id, NULL AS snippet,
          CASE WHEN OCTET_LENGTH(m.content) > ${WHOLE_TEXT_MAX_BYTES} THEN ${head} ELSE ${searchText('m')} END AS search_text
        FROM ${t.messages} m WHERE m.id IN (${idList(ids)})`;
    },
    *matchesMessage(path, match, id) {
      const [found] = yield* judge(path, match, [{ id, t: 0, chars: 0 }]);
      return found !== undefined;
    },
    like: (tokens, where, limit, offset) => {
      const content = helpers.contentText('m');
      // Each column is folded once, in a derived table that the server merges into the query, not once per
      // token: the fold is 26 REPLACEs, and a query may hold hundreds of tokens.
      const clauses = tokens.map((token) => {
        const pattern = containsPattern(token);
        return sql`(${helpers.likeLowered(sql`f.content`, pattern)} OR ${helpers.likeLowered(sql`f.tool_name`, pattern)}
                    OR ${helpers.likeLowered(sql`f.tool_calls`, pattern)})`;
      });
      return sql`
        SELECT ${HIT_COLUMNS},
          SUBSTRING(${content}, GREATEST(1, LOCATE(${tokens[0]!}, ${content}) - 40), 120) AS snippet
        FROM ${t.messages} m JOIN ${t.sessions} s ON s.id = m.session_id
        JOIN (SELECT id, ${helpers.asciiLower(content)} AS content,
            ${helpers.asciiLower(sql`m.tool_name`)} AS tool_name, ${helpers.asciiLower(sql`m.tool_calls`)} AS tool_calls
          FROM ${t.messages} m) f ON f.id = m.id
        WHERE (${sql.join(clauses, sql` OR `)}) ${where ?? sql``}
        ORDER BY m.timestamp DESC, m.id DESC
        LIMIT ${limit} OFFSET ${offset}`;
    },
    *catchUp() {
      if (!countsStored) return false;
      try {
        return (yield* fillTokenCounts(sql``)).length === COUNT_CHUNK;
      } catch (error) {
        // The UPDATE alone failed (MySQL rolls back the statement, not the transaction): searches go on,
        // counting what is not stored (weights).
        if (!writeRefused(error)) throw error;
        countsStored = false;
        return false;
      }
    },
    *fillRange(after, last) {
      const filled = yield* fillTokenCounts(sql`AND message_id > ${after} AND message_id <= ${last}`);
      if (filled.length === 0) return null;
      return filled.length < COUNT_CHUNK ? last : filled.at(-1)!.id;
    },
  };
}
