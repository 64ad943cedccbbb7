/**
 * The block index's rows on MySQL/MariaDB (migration 0007): the statements that list, read, find and write
 * blocks, keyed by termKey (long terms whole in full_term). search-blocks.ts runs them in its catch-up steps and
 * readers, as src/db/pg/search-blocks.ts runs Postgres' own.
 */
import type { ListedBlock } from '../blocks-reader.js';
import { sql } from 'drizzle-orm';
import type { PostingsBlock } from '../../search/postings-block.js';
import { type IndexChange, uniqueBlocks } from '../../search/postings-index.js';
import { isLongTerm, prefixKeyRange, termKey } from '../../search/term-key.js';
import type { TableNames } from '../../sql/tables.js';
import type { Op } from '../ops.js';
import { exec, rows } from '../ops.js';

/** Keys per statement (each an index dive); blocks and their bytes per INSERT (sent hex-escaped: twice that). */
const KEYS_PER_STATEMENT = 500;
const INSERT_ROWS = 500;
const INSERT_BYTES = 2 * 2 ** 20;

/**
 * Binary columns are read under an alias starting with `bin_`: the pool decodes every other binary column as
 * UTF-8 text (open.ts), which would corrupt postings.
 */
export const bytesOf = (value: unknown): Uint8Array => {
  if (value instanceof Uint8Array) return value;
  throw new TypeError(`expected bytes, got ${typeof value}`);
};
/**
 * Ids for an IN list, written into the statement (integers only): thousands of parameters would make the
 * statement builder recurse past the stack. None is NULL (IN (NULL) matches nothing).
 */
export const idList = (ids: readonly number[]) => {
  for (const id of ids) if (!Number.isSafeInteger(id)) throw new TypeError(`not an id: ${id}`);
  return sql.raw(ids.length === 0 ? 'NULL' : ids.join(', '));
};
const hexKey = (term: string) => termKey(term).toString('hex');
export function* chunks<T>(items: readonly T[], size: number) {
  for (let i = 0; i < items.length; i += size) yield items.slice(i, i + size);
}

const ENTRY_COLUMNS = sql.raw(
  'COALESCE(b.full_term, b.term) AS term, b.first_id, b.last_id, b."count", b.bound AS bin_bound, b.version',
);
const entryOf = (r: Record<string, unknown>): ListedBlock => ({
  term: String(r.term),
  firstId: Number(r.first_id),
  lastId: Number(r.last_id),
  count: Number(r.count),
  bound: bytesOf(r.bin_bound),
  version: String(r.version),
});
const blockOf = (r: Record<string, unknown>): PostingsBlock => ({ ...entryOf(r), data: bytesOf(r.bin_data) });

/** Merged blocks (without data) of these terms and of every term starting with one of the prefixes. */
export function* listBlocks(t: TableNames, kind: number, terms: readonly string[], prefixes: readonly string[]) {
  const found: ListedBlock[] = [];
  for (const part of chunks(terms, KEYS_PER_STATEMENT))
    for (const r of yield* rows(sql`SELECT ${ENTRY_COLUMNS} FROM ${t.messageSearchBlocks} b
        WHERE b.kind = ${kind} AND b.term IN (${sql.join(
          part.map((term) => sql`${termKey(term)}`),
          sql`, `,
        )})`))
      found.push(entryOf(r));
  for (const p of prefixes) {
    const { from, to } = prefixKeyRange(p);
    const range = to === null ? sql`b.term >= ${from}` : sql`b.term >= ${from} AND b.term < ${to}`;
    for (const r of yield* rows(
      sql`SELECT ${ENTRY_COLUMNS} FROM ${t.messageSearchBlocks} b WHERE b.kind = ${kind} AND ${range}`,
    )) {
      const e = entryOf(r);
      if (e.term.startsWith(p)) found.push(e);
    }
  }
  return uniqueBlocks(found);
}

/** The data of these blocks, in their order. */
export function* readBlocks(t: TableNames, kind: number, blocks: readonly { term: string; firstId: number }[]) {
  const at = new Map<string, number>();
  for (const [i, b] of blocks.entries()) at.set(`${hexKey(b.term)}:${b.firstId}`, i);
  const out: Uint8Array[] = new Array(blocks.length);
  for (const part of chunks(blocks, KEYS_PER_STATEMENT)) {
    const keys = part.map((b) => sql`(b.term = ${termKey(b.term)} AND b.first_id = ${b.firstId})`);
    const found = yield* rows(sql`SELECT b.term AS bin_key, b.first_id, b.data AS bin_data
      FROM ${t.messageSearchBlocks} b WHERE b.kind = ${kind} AND (${sql.join(keys, sql` OR `)})`);
    for (const r of found) {
      const i = at.get(`${Buffer.from(bytesOf(r.bin_key)).toString('hex')}:${Number(r.first_id)}`);
      if (i !== undefined) out[i] = bytesOf(r.bin_data);
    }
  }
  for (let i = 0; i < out.length; i++)
    if (out[i] === undefined) throw new Error(`search index: block ${blocks[i]!.term}@${blocks[i]!.firstId} is gone`);
  return out;
}

/** Per (term, id): the first id of the term's last block starting at or before id (none: absent). */
function* floors(t: TableNames, kind: number, places: readonly { term: string; id: number }[]) {
  const out = new Map<number, number>();
  for (const [c, part] of [...chunks(places, KEYS_PER_STATEMENT)].entries()) {
    const selects = part.map(
      (p, i) => sql`(SELECT ${c * KEYS_PER_STATEMENT + i} AS n, x.first_id FROM ${t.messageSearchBlocks} x
        WHERE x.kind = ${kind} AND x.term = ${termKey(p.term)} AND x.first_id <= ${p.id} ORDER BY x.first_id DESC LIMIT 1)`,
    );
    for (const r of yield* rows(sql.join(selects, sql` UNION ALL `))) out.set(Number(r.n), Number(r.first_id));
  }
  return out;
}

/** Blocks of each term from `from` (a first id) to `to` (inclusive), with data. */
function* blockRanges(t: TableNames, kind: number, ranges: readonly { term: string; from: number; to: number }[]) {
  const out: PostingsBlock[] = [];
  for (const part of chunks(ranges, KEYS_PER_STATEMENT)) {
    const keys = part.map(
      (r) => sql`(b.term = ${termKey(r.term)} AND b.first_id >= ${r.from} AND b.first_id <= ${r.to})`,
    );
    const found = yield* rows(sql`SELECT ${ENTRY_COLUMNS}, b.data AS bin_data FROM ${t.messageSearchBlocks} b
      WHERE b.kind = ${kind} AND (${sql.join(keys, sql` OR `)})`);
    out.push(...found.map(blockOf));
  }
  return out;
}

/** Per term: its blocks from the one holding `fromId` on, and its last block (what a merge rewrites). */
export function* tailBlocks(t: TableNames, kind: number, terms: readonly string[], fromId: number) {
  if (terms.length === 0) return [] as PostingsBlock[];
  const floor = yield* floors(
    t,
    kind,
    terms.map((term) => ({ term, id: fromId })),
  );
  return yield* blockRanges(
    t,
    kind,
    terms.map((term, i) => ({ term, from: floor.get(i) ?? 0, to: Number.MAX_SAFE_INTEGER })),
  );
}

/** Merged blocks whose id range holds one of these (term, id) places. */
export function* holdingBlocks(t: TableNames, kind: number, places: readonly { term: string; id: number }[]) {
  if (places.length === 0) return [] as PostingsBlock[];
  const floor = yield* floors(t, kind, places);
  const wanted = new Map<string, { term: string; from: number; to: number }>();
  for (const [i, p] of places.entries()) {
    const from = floor.get(i);
    if (from !== undefined) wanted.set(`${from}\u0000${p.term}`, { term: p.term, from, to: from });
  }
  const found = yield* blockRanges(t, kind, [...wanted.values()]);
  const ids = new Map<string, number[]>();
  for (const p of places) (ids.get(p.term) ?? ids.set(p.term, []).get(p.term)!).push(p.id);
  // A floor block that ends before its place's id holds nothing of it: keep only the blocks that hold a place.
  return found.filter((b) => ids.get(b.term)?.some((id) => id >= b.firstId && id <= b.lastId));
}

/** Insert blocks, in statements of about INSERT_BYTES. */
export function* insertBlocks(t: TableNames, kind: number, blocks: readonly PostingsBlock[]): Op<void> {
  for (let i = 0; i < blocks.length; ) {
    let bytes = 0;
    let j = i;
    while (j < blocks.length && (j === i || (bytes < INSERT_BYTES && j - i < INSERT_ROWS))) {
      const b = blocks[j++]!;
      bytes += b.data.length + (isLongTerm(b.term) ? Buffer.byteLength(b.term) : 0);
    }
    const values = blocks.slice(i, j).map(
      (b) =>
        sql`(${kind}, ${termKey(b.term)}, ${isLongTerm(b.term) ? Buffer.from(b.term, 'utf8') : null}, ${b.firstId},
          ${b.lastId}, ${b.count}, ${Buffer.from(b.bound)}, ${Buffer.from(b.data)}, UUID_SHORT())`,
    );
    yield* exec(sql`INSERT INTO ${t.messageSearchBlocks} (kind, term, full_term, first_id, last_id, "count", bound, data, version)
      VALUES ${sql.join(values, sql`, `)}`);
    i = j;
  }
}

/** Write one index's change: blocks out and in, and its merged totals. */
export function* commitChange(t: TableNames, kind: number, change: IndexChange): Op<void> {
  const removed = change.changes.flatMap((c) => c.remove.map((firstId) => ({ term: c.term, firstId })));
  for (const part of chunks(removed, KEYS_PER_STATEMENT)) {
    const keys = part.map((b) => sql`(term = ${termKey(b.term)} AND first_id = ${b.firstId})`);
    yield* exec(sql`DELETE FROM ${t.messageSearchBlocks} WHERE kind = ${kind} AND (${sql.join(keys, sql` OR `)})`);
  }
  yield* insertBlocks(
    t,
    kind,
    change.changes.flatMap((c) => c.write),
  );
  if (change.totals.messages !== 0 || change.totals.tokens !== 0)
    yield* exec(sql`UPDATE ${t.messageSearchMerged} SET messages = messages + ${change.totals.messages},
      tokens = tokens + ${change.totals.tokens} WHERE kind = ${kind}`);
}
