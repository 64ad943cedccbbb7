/**
 * The block index on Postgres and PGlite (migration 0010): the shared core's storage (src/search/postings-index.ts)
 * as SQL. Writes only queue messages (triggers); `catchUp` tokenizes the queued ones, takes removed messages
 * out of the blocks and folds the recent segment into them, a bounded piece per transaction, before a search.
 * A search reads blocks, the recent segment and the totals in one snapshot and ranks with rank-postings.ts.
 */
import { type SQL, sql } from 'drizzle-orm';
import type { Op } from '../ops.js';
import { exec, rows } from '../ops.js';
export { MERGE_AT } from '../blocks-upkeep.js';
import { buildBlocks } from '../blocks-build.js';
import {
  BLOCK_CACHE_BYTES,
  BUILD_AT,
  INDEX_KINDS,
  MERGE_AT,
  MERGE_BYTES,
  MODES,
  REMOVE_ROWS,
  TOKENIZE_BYTES,
  TOKENIZE_ROWS,
  withinBytes,
} from '../blocks-upkeep.js';
import { type BlockIndexReads, type ListedBlock, blockIndexReader } from '../blocks-reader.js';
import { type IndexedText, decodeIndexed, encodeIndexed, indexText } from '../../search/postings.js';
import type { PostingsBlock } from '../../search/postings-block.js';
import { BlockDataCache } from '../../search/block-data-cache.js';
import {
  type BlockChange,
  type IndexChange,
  type RecentMessage,
  planMerge,
  planRemoval,
  uniqueBlocks,
  removalPlaces,
  termsOf,
} from '../../search/postings-index.js';
import type { QueryMode } from '../../search/query.js';
import type { BlockEntry, PostingsReader } from '../../search/rank-postings.js';
import type { QualifiedNames } from '../../sql/tables.js';
import { isLongTerm, prefixKeyRange, termKey } from '../../search/term-key.js';
import { searchableText } from './searchable-text.js';

/** Dead queue rows (deleted or rewritten by catch-ups) after which they are vacuumed. */
const VACUUM_AT = 2_000;

const json = (value: unknown) => sql`${JSON.stringify(value)}::json`;
/** The condition that an id is one of `ids` (a JSON parameter: one bind whatever the count). */
export const idIn = (column: SQL, ids: readonly number[]) =>
  sql`${column} IN (SELECT value::int8 FROM json_array_elements_text(${json(ids)}))`;
const base64 = (bytes: Uint8Array) => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64');
/** A term's block key (term-key.ts), base64 for a JSON parameter. */
const keyOf = (term: string) => termKey(term).toString('base64');
const bytesOf = (value: unknown): Uint8Array => {
  if (value instanceof Uint8Array) return value;
  throw new TypeError(`expected bytea, got ${typeof value}`);
};

/** Bytes of a message's searchable columns (aliased m): what tokenizing it costs. */
const MESSAGE_BYTES = sql.raw(
  'COALESCE(octet_length(m.content), 0) + COALESCE(octet_length(m.content_json::text), 0) + COALESCE(octet_length(m.tool_calls::text), 0)',
);

/** A lock per store (its blocks table's name): merges and removals rewrite blocks one at a time. */
const blocksLock = (n: QualifiedNames) =>
  sql`SELECT pg_advisory_xact_lock(hashtext(${`hermes_sessiondb.search_blocks:${n.schema}`}))`;

const entryOf = (r: Record<string, unknown>): BlockEntry => ({
  term: String(r.term),
  firstId: Number(r.first_id),
  lastId: Number(r.last_id),
  count: Number(r.count),
  bound: bytesOf(r.bound),
});
const blockOf = (r: Record<string, unknown>): PostingsBlock => ({ ...entryOf(r), data: bytesOf(r.data) });
const ENTRY_COLUMNS = sql.raw(
  `convert_from(COALESCE(b.full_term, b.term), 'UTF8') AS term, b.first_id, b.last_id, b.count, b.bound`,
);

/** Merged blocks (without data) of these terms and of every term starting with one of the prefixes. */
function* listBlocks(n: QualifiedNames, kind: number, terms: readonly string[], prefixes: readonly string[]) {
  const found: ListedBlock[] = [];
  const listed = (r: Record<string, unknown>): ListedBlock => ({ ...entryOf(r), version: String(r.version) });
  if (terms.length > 0)
    for (const r of yield* rows(sql`SELECT ${ENTRY_COLUMNS}, b.xmin::text AS version FROM ${n.messageSearchBlocks} b
        WHERE b.kind = ${kind} AND b.term IN (SELECT decode(t, 'base64') FROM json_array_elements_text(${json(terms.map(keyOf))}) t)`))
      found.push(listed(r));
  for (const p of prefixes) {
    const { from, to } = prefixKeyRange(p);
    const range =
      to === null
        ? sql`b.term >= decode(${from.toString('base64')}, 'base64')`
        : sql`b.term >= decode(${from.toString('base64')}, 'base64') AND b.term < decode(${to.toString('base64')}, 'base64')`;
    for (const r of yield* rows(
      sql`SELECT ${ENTRY_COLUMNS}, b.xmin::text AS version FROM ${n.messageSearchBlocks} b WHERE b.kind = ${kind} AND ${range}`,
    )) {
      const e = listed(r);
      if (e.term.startsWith(p)) found.push(e);
    }
  }
  return uniqueBlocks(found);
}

/** The data of these blocks, in their order. */
function* readBlocks(n: QualifiedNames, kind: number, blocks: readonly { term: string; firstId: number }[]) {
  if (blocks.length === 0) return [] as Uint8Array[];
  const keys = blocks.map((b, i) => ({ key: keyOf(b.term), first_id: b.firstId, n: i }));
  const found =
    yield* rows(sql`SELECT k.n, b.data FROM json_to_recordset(${json(keys)}) AS k(key text, first_id int8, n int)
    JOIN ${n.messageSearchBlocks} b ON b.kind = ${kind} AND b.term = decode(k.key, 'base64') AND b.first_id = k.first_id`);
  const out: Uint8Array[] = new Array(blocks.length);
  for (const r of found) out[Number(r.n)] = bytesOf(r.data);
  for (let i = 0; i < out.length; i++)
    if (out[i] === undefined) throw new Error(`search index: block ${blocks[i]!.term}@${blocks[i]!.firstId} is gone`);
  return out;
}

/** Per term: its blocks from the one holding `fromId` on, and its last block (what a merge rewrites). */
function* tailBlocks(n: QualifiedNames, kind: number, terms: readonly string[], fromId: number) {
  if (terms.length === 0) return [] as PostingsBlock[];
  // From the block holding fromId (none: the term's first) to its last block.
  const found = yield* rows(sql`SELECT ${ENTRY_COLUMNS}, b.data
    FROM json_array_elements_text(${json(terms.map(keyOf))}) t(term)
    CROSS JOIN LATERAL (SELECT decode(t.term, 'base64') AS key) k
    CROSS JOIN LATERAL (SELECT max(x.first_id) AS at FROM ${n.messageSearchBlocks} x
                        WHERE x.kind = ${kind} AND x.term = k.key AND x.first_id <= ${fromId}) s
    JOIN ${n.messageSearchBlocks} b ON b.kind = ${kind} AND b.term = k.key AND b.first_id >= COALESCE(s.at, 0)`);
  return found.map(blockOf);
}

/** Merged blocks whose id range holds one of these (term, id) places. */
function* holdingBlocks(n: QualifiedNames, kind: number, places: readonly { term: string; id: number }[]) {
  if (places.length === 0) return [] as PostingsBlock[];
  const found = yield* rows(sql`SELECT DISTINCT ON (b.term, b.first_id) ${ENTRY_COLUMNS}, b.data
    FROM json_to_recordset(${json(places.map((p) => ({ key: keyOf(p.term), id: p.id })))}) AS p(key text, id int8),
    LATERAL (SELECT x.* FROM ${n.messageSearchBlocks} x WHERE x.kind = ${kind} AND x.term = decode(p.key, 'base64')
             AND x.first_id <= p.id ORDER BY x.first_id DESC LIMIT 1) b
    WHERE b.last_id >= p.id`);
  return found.map(blockOf);
}

/** Insert blocks, in statements of about 3 MB (base64 in one JSON parameter). */
function* insertBlocks(n: QualifiedNames, kind: number, blocks: readonly PostingsBlock[]): Op<void> {
  for (let i = 0; i < blocks.length; ) {
    let bytes = 0;
    let j = i;
    while (j < blocks.length && (j === i || bytes < 3 * 2 ** 20)) bytes += blocks[j++]!.data.length;
    const batch = blocks.slice(i, j).map((b) => ({
      key: keyOf(b.term),
      full_term: isLongTerm(b.term) ? Buffer.from(b.term, 'utf8').toString('base64') : null,
      first_id: b.firstId,
      last_id: b.lastId,
      count: b.count,
      bound: base64(b.bound),
      data: base64(b.data),
    }));
    yield* exec(sql`INSERT INTO ${n.messageSearchBlocks} (kind, term, full_term, first_id, last_id, count, bound, data)
      SELECT ${kind}, decode(k.key, 'base64'), decode(k.full_term, 'base64'), k.first_id, k.last_id, k.count,
        decode(k.bound, 'base64'), decode(k.data, 'base64')
      FROM json_to_recordset(${json(batch)}) AS k(key text, full_term text, first_id int8, last_id int8, count int, bound text, data text)`);
    i = j;
  }
}

/** Write one index's change: blocks out and in, and its merged totals. */
function* commitChange(n: QualifiedNames, kind: number, change: IndexChange): Op<void> {
  const removed = change.changes.flatMap((c: BlockChange) =>
    c.remove.map((firstId) => ({ key: keyOf(c.term), first_id: firstId })),
  );
  for (let i = 0; i < removed.length; i += 5_000)
    yield* exec(sql`DELETE FROM ${n.messageSearchBlocks} b USING json_to_recordset(${json(removed.slice(i, i + 5_000))}) AS k(key text, first_id int8)
      WHERE b.kind = ${kind} AND b.term = decode(k.key, 'base64') AND b.first_id = k.first_id`);
  yield* insertBlocks(
    n,
    kind,
    change.changes.flatMap((c) => c.write),
  );
  if (change.totals.messages !== 0 || change.totals.tokens !== 0)
    yield* exec(sql`UPDATE ${n.messageSearchMerged} SET messages = messages + ${change.totals.messages},
      tokens = tokens + ${change.totals.tokens} WHERE kind = ${kind}`);
}

/** A recent-segment message as a search decodes it once per process (rows are immutable until rewritten). */
interface CachedRecent {
  version: string;
  words: Uint8Array;
  trigrams: Uint8Array;
  decoded: [IndexedText | null, IndexedText | null];
}

const SEARCH_COLUMNS = sql.raw('m.content, m.content_json, m.tool_name, m.tool_calls');

/**
 * The block index of one store: its catch-up steps and its readers. Holds the recent segment's decode cache and
 * a cache of block data.
 */
export class PgBlockIndex {
  private readonly cache = new Map<number, CachedRecent>();
  private readonly blockData = new BlockDataCache(BLOCK_CACHE_BYTES);
  /** Queue rows this process' catch-ups deleted or rewrote since it last vacuumed them (see vacuumDue). */
  private deadRows = 0;

  constructor(private readonly n: QualifiedNames) {}

  /**
   * One piece of upkeep, in the caller's write transaction: tokenize queued messages, else take removed ones
   * out of the blocks, else fold the recent segment into the blocks when it is large. True while more is left.
   */
  *catchUp(): Op<boolean> {
    const { n } = this;
    // One statement says whether there is anything to do (the usual answer before a search: no).
    const [state] = yield* rows<{
      queued: number;
      removed: boolean;
      recent: number;
      merged: string | number;
    }>(sql`SELECT
        (SELECT count(*)::int FROM (SELECT 1 FROM ${n.messageSearchRecent} WHERE words IS NULL LIMIT ${BUILD_AT}) q) AS queued,
        EXISTS (SELECT 1 FROM ${n.messageSearchRemoved}) AS removed,
        (SELECT count(*)::int FROM (SELECT 1 FROM ${n.messageSearchRecent} LIMIT ${MERGE_AT + BUILD_AT}) r) AS recent,
        (SELECT COALESCE(sum(messages), 0) FROM ${n.messageSearchMerged}) AS merged`);
    const { queued, removed, recent, merged } = state!;
    if (queued >= BUILD_AT && Number(merged) === 0) {
      yield* exec(blocksLock(n));
      yield* this.buildAll();
      return true;
    }
    if (queued > 0) {
      // Sizes first, so one transaction tokenizes a bounded amount of text.
      const sizes = yield* rows(sql`SELECT r.message_id AS id, ${MESSAGE_BYTES} AS bytes
        FROM ${n.messageSearchRecent} r LEFT JOIN ${n.messages} m ON m.id = r.message_id
        WHERE r.words IS NULL ORDER BY r.message_id LIMIT ${TOKENIZE_ROWS}`);
      const ids = withinBytes(sizes, TOKENIZE_BYTES);
      yield* this.tokenize(ids);
      return true;
    }
    if (removed) {
      yield* exec(blocksLock(n));
      yield* this.removeOne();
      return true;
    }
    if (recent < MERGE_AT) return false;
    yield* exec(blocksLock(n));
    yield* this.mergeOldest();
    return true;
  }

  /** Tokenize these queued messages (locked, so a concurrent change waits and queues them again after). */
  private *tokenize(ids: number[]): Op<void> {
    const { n } = this;
    const locked = yield* rows(sql`SELECT r.message_id AS id, m.id AS message, ${SEARCH_COLUMNS}
      FROM ${n.messageSearchRecent} r LEFT JOIN ${n.messages} m ON m.id = r.message_id
      WHERE ${idIn(sql`r.message_id`, ids)} AND r.words IS NULL
      ORDER BY r.message_id FOR UPDATE OF r`);
    // A queued id with no message (deleted with the triggers off) has nothing to index: its row just goes.
    const orphans = locked.filter((r) => r.message === null).map((r) => Number(r.id));
    if (orphans.length > 0)
      yield* exec(sql`DELETE FROM ${n.messageSearchRecent} WHERE ${idIn(sql`message_id`, orphans)}`);
    this.deadRows += orphans.length;
    const found = locked.filter((r) => r.message !== null);
    const indexed = found.map((r) => {
      const text = searchableText(r);
      return {
        id: Number(r.id),
        words: base64(encodeIndexed(indexText(text, 'words'))),
        trigrams: base64(encodeIndexed(indexText(text, 'substrings'))),
      };
    });
    if (indexed.length === 0) return;
    this.deadRows += indexed.length;
    yield* exec(sql`UPDATE ${n.messageSearchRecent} r SET words = decode(k.words, 'base64'), trigrams = decode(k.trigrams, 'base64')
      FROM json_to_recordset(${json(indexed)}) AS k(id int8, words text, trigrams text) WHERE r.message_id = k.id`);
  }

  /**
   * Build an empty index from every queued message in one pass (postings-build.ts). The queued rows are locked
   * until it commits: a message changed or deleted meanwhile is queued again (or removed) after it.
   */
  private *buildAll(): Op<void> {
    const { n } = this;
    const [merged] = yield* rows(sql`SELECT COALESCE(sum(messages), 0) AS m,
      (SELECT count(*) FROM ${n.messageSearchBlocks}) AS b FROM ${n.messageSearchMerged}`);
    // Another process built it first (the lock serializes builds and merges).
    if (Number(merged!.m) !== 0 || Number(merged!.b) !== 0) return;
    const queued = yield* rows(sql`SELECT r.message_id AS id, ${MESSAGE_BYTES} AS bytes
      FROM ${n.messageSearchRecent} r LEFT JOIN ${n.messages} m ON m.id = r.message_id
      WHERE r.words IS NULL ORDER BY r.message_id FOR UPDATE OF r`);
    yield* buildBlocks(
      queued.map((q) => ({ id: Number(q.id), bytes: Number(q.bytes) })),
      {
        *texts(ids) {
          const found = yield* rows(sql`SELECT m.id, ${SEARCH_COLUMNS} FROM ${n.messages} m
            WHERE ${idIn(sql`m.id`, ids)} ORDER BY m.id`);
          return { ids: found.map((r) => Number(r.id)), texts: found.map(searchableText) };
        },
        insert: (kind, blocks) => insertBlocks(n, kind, blocks),
        *totals(kind, messages, tokens) {
          yield* exec(
            sql`UPDATE ${n.messageSearchMerged} SET messages = ${messages}, tokens = ${tokens} WHERE kind = ${kind}`,
          );
        },
      },
    );
    const ids = queued.map((q) => Number(q.id));
    this.deadRows += ids.length;
    for (let i = 0; i < ids.length; i += 10_000)
      yield* exec(sql`DELETE FROM ${n.messageSearchRecent} WHERE ${idIn(sql`message_id`, ids.slice(i, i + 10_000))}`);
  }

  /** Take the oldest removed messages' postings out of the blocks. */
  private *removeOne(): Op<void> {
    const { n } = this;
    const found = yield* rows(sql`SELECT seq, message_id AS id, content, content_json, tool_name, tool_calls
      FROM ${n.messageSearchRemoved} ORDER BY seq LIMIT ${REMOVE_ROWS} FOR UPDATE`);
    if (found.length === 0) return;
    // A message removed twice (changed, then deleted) left the blocks once: only its first text was merged.
    const first = new Map<number, Record<string, unknown>>();
    for (const r of found) if (!first.has(Number(r.id))) first.set(Number(r.id), r);
    for (const [k, mode] of MODES.entries()) {
      const messages: RecentMessage[] = [...first].map(([id, r]) => ({
        id,
        indexed: indexText(searchableText(r), mode),
      }));
      const places = removalPlaces(messages, new Set());
      const holding = yield* holdingBlocks(n, k, places);
      yield* commitChange(n, k, planRemoval(messages, new Set(), holding));
    }
    yield* exec(
      sql`DELETE FROM ${n.messageSearchRemoved} WHERE ${idIn(
        sql`seq`,
        found.map((r) => Number(r.seq)),
      )}`,
    );
    this.deadRows += found.length;
  }

  /** Fold the oldest tokenized recent messages (a bounded amount of postings) into the blocks. */
  private *mergeOldest(): Op<void> {
    const { n } = this;
    const sizes = yield* rows(sql`SELECT message_id AS id, octet_length(words) + octet_length(trigrams) AS bytes
      FROM ${n.messageSearchRecent} WHERE words IS NOT NULL ORDER BY message_id LIMIT ${MERGE_AT * 4}`);
    const ids = withinBytes(sizes, MERGE_BYTES);
    const found = yield* rows(sql`SELECT message_id AS id, words, trigrams FROM ${n.messageSearchRecent}
      WHERE ${idIn(sql`message_id`, ids)} AND words IS NOT NULL
      ORDER BY message_id FOR UPDATE`);
    if (found.length === 0) return;
    for (const [k, column] of ['words', 'trigrams'].entries()) {
      const recent: RecentMessage[] = found.map((r) => ({
        id: Number(r.id),
        indexed: decodeIndexed(bytesOf(r[column])),
      }));
      const tails = yield* tailBlocks(n, k, termsOf(recent), recent[0]!.id);
      yield* commitChange(n, k, planMerge(recent, tails));
    }
    yield* exec(
      sql`DELETE FROM ${n.messageSearchRecent} WHERE ${idIn(
        sql`message_id`,
        found.map((r) => Number(r.id)),
      )}`,
    );
    this.deadRows += found.length;
  }

  /**
   * The queue tables, once this process' catch-ups left VACUUM_AT dead rows in them (then counted afresh).
   * Every search's first statement walks them: 200,000 dead rows after a build cost it ~15 ms per search.
   */
  vacuumDue(): SQL[] | null {
    if (this.deadRows < VACUUM_AT) return null;
    this.deadRows = 0;
    return [this.n.messageSearchRecent, this.n.messageSearchRemoved];
  }

  /** The recent segment's tokenized messages, decoded for one index (cached per process by row version). */
  private *recent(kind: number): Op<RecentMessage[]> {
    const { n } = this;
    const listed = yield* rows(
      sql`SELECT message_id AS id, xmin::text AS version FROM ${n.messageSearchRecent} WHERE words IS NOT NULL`,
    );
    const live = new Set<number>();
    const missing: number[] = [];
    for (const r of listed) {
      const id = Number(r.id);
      live.add(id);
      if (this.cache.get(id)?.version !== String(r.version)) missing.push(id);
    }
    for (const id of this.cache.keys()) if (!live.has(id)) this.cache.delete(id);
    for (let i = 0; i < missing.length; i += 1_000) {
      const found =
        yield* rows(sql`SELECT message_id AS id, xmin::text AS version, words, trigrams FROM ${n.messageSearchRecent}
        WHERE ${idIn(sql`message_id`, missing.slice(i, i + 1_000))} AND words IS NOT NULL`);
      for (const r of found)
        this.cache.set(Number(r.id), {
          version: String(r.version),
          words: bytesOf(r.words),
          trigrams: bytesOf(r.trigrams),
          decoded: [null, null],
        });
    }
    const out: RecentMessage[] = [];
    for (const r of listed) {
      const cached = this.cache.get(Number(r.id));
      if (cached === undefined) continue;
      cached.decoded[kind] ??= decodeIndexed(kind === 0 ? cached.words : cached.trigrams);
      out.push({ id: Number(r.id), indexed: cached.decoded[kind]! });
    }
    return out.sort((a, b) => a.id - b.id);
  }

  /** What a search reads of one index, every read through `read` (one snapshot: see Runner.snapshot). */
  reader(mode: QueryMode, read: <T>(op: Op<T>) => Promise<T>): PostingsReader {
    const { n } = this;
    const kind = INDEX_KINDS[mode];
    const reads: BlockIndexReads = {
      list: (terms, prefixes) => listBlocks(n, kind, terms, prefixes),
      read: (blocks) => readBlocks(n, kind, blocks),
      recent: () => this.recent(kind),
      *totals() {
        const [r] = yield* rows(sql`SELECT messages, tokens FROM ${n.messageSearchMerged} WHERE kind = ${kind}`);
        return { messages: Number(r?.messages ?? 0), tokens: Number(r?.tokens ?? 0) };
      },
    };
    return blockIndexReader(kind, reads, this.blockData, read);
  }
}
