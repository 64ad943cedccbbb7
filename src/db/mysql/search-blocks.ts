/**
 * The block index on MySQL/MariaDB (migration 0007): the shared core's storage (src/search/postings-index.ts) as
 * SQL, step for step as src/db/pg/search-blocks.ts keeps it on Postgres. Writes only queue messages (row
 * triggers); `catchUp` tokenizes queued ones, takes removed messages out of the blocks and folds the recent
 * segment into them, a bounded piece per transaction. What differs from Postgres: terms are stored under their
 * termKey (long terms whole in full_term), a lock row (message_search_merged, kind 0) serializes block writers,
 * row `version` columns stand for xmin, and keys travel as binary parameters (the statements: block-rows.ts).
 */
import { type SQL, sql } from 'drizzle-orm';
import { BlockDataCache } from '../../search/block-data-cache.js';
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
import { type BlockIndexReads, blockIndexReader } from '../blocks-reader.js';
import { type RecentMessage, planMerge, planRemoval, removalPlaces, termsOf } from '../../search/postings-index.js';
import { type IndexedText, decodeIndexed, encodeIndexed, indexText } from '../../search/postings.js';
import type { QueryMode } from '../../search/query.js';
import type { PostingsReader } from '../../search/rank-postings.js';
import type { TableNames } from '../../sql/tables.js';
import type { Op } from '../ops.js';
import { exec, rows } from '../ops.js';
import {
  bytesOf,
  chunks,
  commitChange,
  holdingBlocks,
  idList,
  insertBlocks,
  listBlocks,
  readBlocks,
  tailBlocks,
} from './block-rows.js';

/**
 * A message's searchable text as Hermes' FTS5 tables index it: content as SQLite stores it (structured content
 * with its prefix), tool name and tool calls, joined by spaces, NULL as empty.
 */
export function searchableText(row: Record<string, unknown>): string {
  const text = (v: unknown) =>
    v === null || v === undefined ? '' : Buffer.isBuffer(v) ? v.toString('utf8') : String(v);
  return `${text(row.content)} ${text(row.tool_name)} ${text(row.tool_calls)}`;
}

/** Bytes of a message's searchable columns (aliased m): what tokenizing it costs. */
const MESSAGE_BYTES = sql.raw('COALESCE(OCTET_LENGTH(m.content), 0) + COALESCE(OCTET_LENGTH(m.tool_calls), 0)');
const SEARCH_COLUMNS = sql.raw('m.content, m.tool_name, m.tool_calls');
/** The lock that makes merges, removals and builds of a store run one at a time (until commit). */
const blocksLock = (t: TableNames) => sql`SELECT kind FROM ${t.messageSearchMerged} WHERE kind = 0 FOR UPDATE`;

/**
 * A recent-segment message as a search decodes it once per process (rows are immutable until rewritten). A
 * queued message (not tokenized yet: a user who may not write the index searches) is tokenized here.
 */
interface CachedRecent {
  version: string;
  words: Uint8Array | null;
  trigrams: Uint8Array | null;
  decoded: [IndexedText | null, IndexedText | null];
}

/** The block index of one store: its catch-up steps and its readers (with their per-process caches). */
export class MysqlBlockIndex {
  private readonly cache = new Map<number, CachedRecent>();
  private readonly blockData = new BlockDataCache(BLOCK_CACHE_BYTES);

  constructor(private readonly t: TableNames) {}

  /**
   * One piece of upkeep, in the caller's write transaction: tokenize queued messages, else take removed ones
   * out of the blocks, else fold the recent segment into the blocks when it is large. True while more is left.
   */
  *catchUp(): Op<boolean> {
    const { t } = this;
    const [state] = yield* rows(sql`SELECT
        (SELECT COUNT(*) FROM (SELECT 1 FROM ${t.messageSearchRecent} WHERE queued LIMIT ${BUILD_AT}) q) AS queued,
        EXISTS (SELECT 1 FROM ${t.messageSearchRemoved}) AS removed,
        (SELECT COUNT(*) FROM (SELECT 1 FROM ${t.messageSearchRecent} LIMIT ${MERGE_AT + BUILD_AT}) r) AS recent,
        (SELECT COALESCE(SUM(messages), 0) FROM ${t.messageSearchMerged}) AS merged,
        @@max_allowed_packet AS packet`);
    const queued = Number(state!.queued);
    if (queued >= BUILD_AT && Number(state!.merged) === 0) {
      yield* exec(blocksLock(t));
      yield* this.buildAll();
      return true;
    }
    if (queued > 0) {
      // Sizes first, so one transaction tokenizes a bounded amount of text.
      const sizes = yield* rows(sql`SELECT r.message_id AS id, ${MESSAGE_BYTES} AS bytes
        FROM ${t.messageSearchRecent} r LEFT JOIN ${t.messages} m ON m.id = r.message_id
        WHERE r.queued ORDER BY r.message_id LIMIT ${TOKENIZE_ROWS}`);
      // A quarter of a packet: a recent row (words and trigrams) must be written and read back in one.
      yield* this.tokenize(withinBytes(sizes, TOKENIZE_BYTES), Number(state!.packet) / 4);
      return true;
    }
    if (Number(state!.removed) !== 0) {
      yield* exec(blocksLock(t));
      yield* this.removeOne();
      return true;
    }
    if (Number(state!.recent) < MERGE_AT) return false;
    yield* exec(blocksLock(t));
    yield* this.mergeOldest();
    return true;
  }

  /**
   * Tokenize these queued messages. Their queue rows are locked (not the messages: a writer's trigger takes the
   * message first, then the queue row), so a concurrent change waits and queues them again after.
   */
  private *tokenize(ids: number[], rowMax: number): Op<void> {
    const { t } = this;
    // Another catch-up may have tokenized them since the sizes were read.
    if (ids.length === 0) return;
    const locked = yield* rows(sql`SELECT message_id AS id FROM ${t.messageSearchRecent}
      WHERE message_id IN (${idList(ids)}) AND queued ORDER BY message_id FOR UPDATE`);
    if (locked.length === 0) return;
    const lockedIds = locked.map((r) => Number(r.id));
    const found = yield* rows(
      sql`SELECT m.id, ${SEARCH_COLUMNS} FROM ${t.messages} m WHERE m.id IN (${idList(lockedIds)})`,
    );
    const byId = new Map(found.map((r) => [Number(r.id), r]));
    // A queued id with no message (deleted with the triggers off) has nothing to index: its row just goes.
    const orphans = lockedIds.filter((id) => !byId.has(id));
    if (orphans.length > 0)
      yield* exec(sql`DELETE FROM ${t.messageSearchRecent} WHERE message_id IN (${idList(orphans)})`);
    const values: SQL[] = [];
    let holdsLock = false;
    for (const [id, r] of byId) {
      const indexed = MODES.map((mode) => indexText(searchableText(r), mode));
      const [words, trigrams] = indexed.map((x) => Buffer.from(encodeIndexed(x)));
      if (words!.length + trigrams!.length <= rowMax) {
        values.push(sql`(${id}, false, ${words}, ${trigrams}, UUID_SHORT())`);
        continue;
      }
      // Too big for one row: straight into the blocks, under their lock (taken after queue rows, where a build
      // takes it before them: InnoDB ends such a deadlock and the runner runs the loser again).
      if (!holdsLock) yield* exec(blocksLock(t));
      holdsLock = true;
      yield* this.mergeOne(id, indexed);
    }
    if (values.length === 0) return;
    yield* exec(sql`INSERT INTO ${t.messageSearchRecent} (message_id, queued, words, trigrams, version)
      VALUES ${sql.join(values, sql`, `)}
      ON DUPLICATE KEY UPDATE queued = false, words = VALUES(words), trigrams = VALUES(trigrams), version = VALUES(version)`);
  }

  /**
   * Build an empty index from every queued message in one pass (postings-build.ts). The queued rows are locked
   * until it commits: a message changed or deleted meanwhile is queued again (or removed) after it.
   */
  private *buildAll(): Op<void> {
    const { t } = this;
    const [merged] = yield* rows(sql`SELECT COALESCE(SUM(messages), 0) AS m,
      (SELECT COUNT(*) FROM ${t.messageSearchBlocks}) AS b FROM ${t.messageSearchMerged}`);
    // Another process built it first (the lock serializes builds and merges).
    if (Number(merged!.m) !== 0 || Number(merged!.b) !== 0) return;
    const queued = yield* rows(sql`SELECT r.message_id AS id, ${MESSAGE_BYTES} AS bytes
      FROM ${t.messageSearchRecent} r LEFT JOIN ${t.messages} m ON m.id = r.message_id
      WHERE r.queued ORDER BY r.message_id FOR UPDATE`);
    yield* buildBlocks(
      queued.map((q) => ({ id: Number(q.id), bytes: Number(q.bytes) })),
      {
        *texts(ids) {
          const found = yield* rows(sql`SELECT m.id, ${SEARCH_COLUMNS} FROM ${t.messages} m
            WHERE m.id IN (${idList(ids)}) ORDER BY m.id`);
          return { ids: found.map((r) => Number(r.id)), texts: found.map(searchableText) };
        },
        insert: (kind, blocks) => insertBlocks(t, kind, blocks),
        *totals(kind, messages, tokens) {
          yield* exec(
            sql`UPDATE ${t.messageSearchMerged} SET messages = ${messages}, tokens = ${tokens} WHERE kind = ${kind}`,
          );
        },
      },
    );
    const ids = queued.map((q) => Number(q.id));
    for (const part of chunks(ids, 10_000))
      yield* exec(sql`DELETE FROM ${t.messageSearchRecent} WHERE message_id IN (${idList(part)})`);
  }

  /**
   * Fold one message into the blocks at once (the caller holds the lock). Its postings split into blocks of
   * about 4 KB, where its recent-segment row would hold all of them: a row must fit max_allowed_packet to be
   * written and read back.
   */
  private *mergeOne(id: number, indexed: IndexedText[]): Op<void> {
    const { t } = this;
    for (const k of MODES.keys()) {
      const recent: RecentMessage[] = [{ id, indexed: indexed[k]! }];
      const tails = yield* tailBlocks(t, k, termsOf(recent), id);
      yield* commitChange(t, k, planMerge(recent, tails));
    }
    yield* exec(sql`DELETE FROM ${t.messageSearchRecent} WHERE message_id = ${id}`);
  }

  /** Take the oldest removed messages' postings out of the blocks. */
  private *removeOne(): Op<void> {
    const { t } = this;
    const found = yield* rows(sql`SELECT seq, message_id AS id, content, tool_name, tool_calls
      FROM ${t.messageSearchRemoved} ORDER BY seq LIMIT ${REMOVE_ROWS} FOR UPDATE`);
    if (found.length === 0) return;
    // A message removed twice (changed, then deleted) left the blocks once: only its first text was merged.
    const first = new Map<number, Record<string, unknown>>();
    for (const r of found) if (!first.has(Number(r.id))) first.set(Number(r.id), r);
    for (const [k, mode] of MODES.entries()) {
      const messages: RecentMessage[] = [...first].map(([id, r]) => ({
        id,
        indexed: indexText(searchableText(r), mode),
      }));
      const holding = yield* holdingBlocks(t, k, removalPlaces(messages, new Set()));
      yield* commitChange(t, k, planRemoval(messages, new Set(), holding));
    }
    yield* exec(sql`DELETE FROM ${t.messageSearchRemoved} WHERE seq IN (${idList(found.map((r) => Number(r.seq)))})`);
  }

  /** Fold the oldest tokenized recent messages (a bounded amount of postings) into the blocks. */
  private *mergeOldest(): Op<void> {
    const { t } = this;
    const sizes = yield* rows(sql`SELECT message_id AS id, OCTET_LENGTH(words) + OCTET_LENGTH(trigrams) AS bytes
      FROM ${t.messageSearchRecent} WHERE NOT queued ORDER BY message_id LIMIT ${MERGE_AT * 4}`);
    const ids = withinBytes(sizes, MERGE_BYTES);
    if (ids.length === 0) return;
    const found = yield* rows(sql`SELECT message_id AS id, words AS bin_words, trigrams AS bin_trigrams
      FROM ${t.messageSearchRecent} WHERE message_id IN (${idList(ids)}) AND NOT queued
      ORDER BY message_id FOR UPDATE`);
    if (found.length === 0) return;
    for (const [k, column] of ['bin_words', 'bin_trigrams'].entries()) {
      const recent: RecentMessage[] = found.map((r) => ({
        id: Number(r.id),
        indexed: decodeIndexed(bytesOf(r[column])),
      }));
      const tails = yield* tailBlocks(t, k, termsOf(recent), recent[0]!.id);
      yield* commitChange(t, k, planMerge(recent, tails));
    }
    yield* exec(
      sql`DELETE FROM ${t.messageSearchRecent} WHERE message_id IN (${idList(found.map((r) => Number(r.id)))})`,
    );
  }

  /**
   * The recent segment, decoded for one index (cached per process by row version). Messages still queued are
   * tokenized here: the catch-up before a search leaves none unless this user may not write the index.
   */
  private *recent(kind: number): Op<RecentMessage[]> {
    const { t } = this;
    const listed = yield* rows(sql`SELECT message_id AS id, version, queued FROM ${t.messageSearchRecent}`);
    const live = new Set<number>();
    const missing: number[] = [];
    const queued: number[] = [];
    for (const r of listed) {
      const id = Number(r.id);
      live.add(id);
      if (this.cache.get(id)?.version !== String(r.version)) (Number(r.queued) ? queued : missing).push(id);
    }
    for (const id of this.cache.keys()) if (!live.has(id)) this.cache.delete(id);
    for (const part of chunks(missing, 1_000)) {
      const found = yield* rows(sql`SELECT message_id AS id, version, words AS bin_words, trigrams AS bin_trigrams
        FROM ${t.messageSearchRecent} WHERE message_id IN (${idList(part)}) AND NOT queued`);
      for (const r of found)
        this.cache.set(Number(r.id), {
          version: String(r.version),
          words: bytesOf(r.bin_words),
          trigrams: bytesOf(r.bin_trigrams),
          decoded: [null, null],
        });
    }
    for (const part of chunks(queued, 500)) {
      const found = yield* rows(sql`SELECT r.message_id AS id, r.version, ${SEARCH_COLUMNS}
        FROM ${t.messageSearchRecent} r JOIN ${t.messages} m ON m.id = r.message_id
        WHERE r.message_id IN (${idList(part)}) AND r.queued`);
      for (const r of found) {
        const text = searchableText(r);
        const decoded: CachedRecent['decoded'] = [indexText(text, 'words'), indexText(text, 'substrings')];
        this.cache.set(Number(r.id), { version: String(r.version), words: null, trigrams: null, decoded });
      }
    }
    const out: RecentMessage[] = [];
    for (const r of listed) {
      const cached = this.cache.get(Number(r.id));
      if (cached === undefined) continue;
      cached.decoded[kind] ??= decodeIndexed(bytesOf(kind === 0 ? cached.words : cached.trigrams));
      out.push({ id: Number(r.id), indexed: cached.decoded[kind]! });
    }
    return out.sort((a, b) => a.id - b.id);
  }

  /** What a search reads of one index, every read through `read` (one snapshot: see Runner.snapshot). */
  reader(mode: QueryMode, read: <T>(op: Op<T>) => Promise<T>): PostingsReader {
    const { t } = this;
    const kind = INDEX_KINDS[mode];
    const reads: BlockIndexReads = {
      list: (terms, prefixes) => listBlocks(t, kind, terms, prefixes),
      read: (blocks) => readBlocks(t, kind, blocks),
      recent: () => this.recent(kind),
      *totals() {
        const [r] = yield* rows(sql`SELECT messages, tokens FROM ${t.messageSearchMerged} WHERE kind = ${kind}`);
        return { messages: Number(r?.messages ?? 0), tokens: Number(r?.tokens ?? 0) };
      },
    };
    return blockIndexReader(kind, reads, this.blockData, read);
  }
}
