/**
 * Postings blocks on each server engine, for bench/postings-search.ts: a table per index (`term, first_id,
 * last_id, count, bound, data`, keyed by term then first id) and its totals, written in bulk, measured, and read
 * as the shared ranking core reads them (src/search/rank-postings.ts).
 */
import mysql from 'mysql2/promise';
import postgres from 'postgres';
import { prefixEnd, uniqueBlocks } from '../src/search/postings-index.js';
import type { PostingsBlock } from '../src/search/postings-block.js';
import type { BlockEntry, PostingsReader } from '../src/search/rank-postings.js';

/** One engine's database for the bench, made fresh and dropped at the end. */
export interface BlockStore {
  engine: string;
  create(table: string): Promise<void>;
  /** Write the blocks; returns how many it could not store (a term longer than the engine's key). */
  insert(
    table: string,
    blocks: readonly PostingsBlock[],
    totals: { messages: number; tokens: number },
  ): Promise<number>;
  /** Bytes the table takes with its key (and its out-of-line values). */
  size(table: string): Promise<number>;
  reader(table: string): PostingsReader;
  drop(): Promise<void>;
}

/** A new database on the Postgres server at `adminUrl`, or null when the server is unreachable. */
export async function postgresBlockStore(adminUrl: string): Promise<BlockStore | null> {
  const admin = postgres(adminUrl, { max: 1, onnotice: () => {}, connect_timeout: 5 });
  try {
    await admin`select 1`;
  } catch {
    await admin.end();
    return null;
  }
  const name = `hsdb_bench_postings_${Date.now()}`;
  await admin.unsafe(`CREATE DATABASE "${name}" LC_CTYPE 'C.UTF-8' TEMPLATE template0`);
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  const db = postgres(url.toString(), { max: 1, onnotice: () => {} });
  type Row = { term: string; first_id: string; last_id: string; count: number; bound: Uint8Array };
  const entry = (r: Row): BlockEntry => ({
    term: r.term,
    firstId: Number(r.first_id),
    lastId: Number(r.last_id),
    count: r.count,
    bound: r.bound,
  });
  return {
    engine: 'Postgres',
    async create(table) {
      await db.unsafe(`CREATE TABLE ${table} (term text COLLATE "C" NOT NULL, first_id bigint NOT NULL,
          last_id bigint NOT NULL, count int NOT NULL, bound bytea NOT NULL, data bytea NOT NULL,
          PRIMARY KEY (term, first_id));
        CREATE TABLE ${table}_totals (messages bigint NOT NULL, tokens bigint NOT NULL)`);
    },
    async insert(table, blocks, totals) {
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
      await db`INSERT INTO ${db(`${table}_totals`)} VALUES (${totals.messages}, ${totals.tokens})`;
      await db.unsafe(`VACUUM ANALYZE ${table}`);
      return 0;
    },
    async size(table) {
      const [row] = await db<{ bytes: string }[]>`SELECT pg_total_relation_size(${table}) AS bytes`;
      return Number(row!.bytes);
    },
    reader(table) {
      const t = db(table);
      const columns = db.unsafe('term, first_id, last_id, count, bound');
      return {
        async blocks(terms, prefixes) {
          const reads = [
            terms.length > 0
              ? db<Row[]>`SELECT ${columns} FROM ${t} WHERE term = ANY(${terms as string[]}::text[])`
              : Promise.resolve([] as Row[]),
            ...prefixes.map((p) => {
              const end = prefixEnd(p);
              return end === null
                ? db<Row[]>`SELECT ${columns} FROM ${t} WHERE term >= ${p} AND starts_with(term, ${p})`
                : db<Row[]>`SELECT ${columns} FROM ${t} WHERE term >= ${p} AND term < ${end}`;
            }),
          ];
          return uniqueBlocks((await Promise.all(reads)).flat().map(entry));
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
    },
    async drop() {
      await db.end();
      await admin.unsafe(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      await admin.end();
    },
  };
}

/**
 * A new database on the MariaDB/MySQL server at `adminUrl`, or null when it is unreachable. Terms are
 * VARBINARY (UTF-8 bytes): byte order is code point order, as the prefix ranges need, and no collation pads or
 * folds them.
 */
export async function mariadbBlockStore(adminUrl: string): Promise<BlockStore | null> {
  let admin: mysql.Connection;
  try {
    admin = await mysql.createConnection({ uri: adminUrl, connectTimeout: 5000 });
  } catch {
    return null;
  }
  const name = `hsdb_bench_postings_${Date.now()}`;
  await admin.query(`CREATE DATABASE \`${name}\``);
  const db = await mysql.createConnection({ uri: adminUrl, database: name, supportBigNumbers: true });
  type Row = { term: Buffer; first_id: number; last_id: number; count: number; bound: Buffer };
  const entry = (r: Row): BlockEntry => ({
    term: r.term.toString('utf8'),
    firstId: Number(r.first_id),
    lastId: Number(r.last_id),
    count: r.count,
    bound: r.bound,
  });
  const utf8 = (s: string) => Buffer.from(s, 'utf8');
  return {
    engine: 'MariaDB',
    async create(table) {
      await db.query(`CREATE TABLE ${table} (term VARBINARY(3000) NOT NULL, first_id BIGINT NOT NULL,
          last_id BIGINT NOT NULL, count INT NOT NULL, bound VARBINARY(255) NOT NULL, data MEDIUMBLOB NOT NULL,
          PRIMARY KEY (term, first_id)) ENGINE=InnoDB`);
      await db.query(`CREATE TABLE ${table}_totals (messages BIGINT NOT NULL, tokens BIGINT NOT NULL)`);
    },
    async insert(table, all, totals) {
      // InnoDB keys hold at most 3,072 bytes.
      const blocks = all.filter((b) => Buffer.byteLength(b.term) <= 3000);
      for (let i = 0; i < blocks.length; i += 1_000) {
        const rows = blocks
          .slice(i, i + 1_000)
          .map((b) => [utf8(b.term), b.firstId, b.lastId, b.count, Buffer.from(b.bound), Buffer.from(b.data)]);
        await db.query(`INSERT INTO ${table} (term, first_id, last_id, count, bound, data) VALUES ?`, [rows]);
      }
      await db.query(`INSERT INTO ${table}_totals VALUES (?, ?)`, [totals.messages, totals.tokens]);
      await db.query(`ANALYZE TABLE ${table}`);
      return all.length - blocks.length;
    },
    async size(table) {
      const [rows] = (await db.query(
        'SELECT data_length + index_length AS bytes FROM information_schema.TABLES WHERE table_schema = ? AND table_name = ?',
        [name, table],
      )) as unknown as [{ bytes: number | string }[]];
      return Number(rows[0]?.bytes ?? 0);
    },
    reader(table) {
      const columns = 'term, first_id, last_id, count, bound';
      return {
        async blocks(terms, prefixes) {
          const reads: Promise<Row[]>[] = [];
          if (terms.length > 0)
            reads.push(
              db
                .query(`SELECT ${columns} FROM ${table} WHERE term IN (?)`, [terms.map(utf8)])
                .then(([rows]) => rows as Row[]),
            );
          for (const p of prefixes) {
            const end = prefixEnd(p);
            reads.push(
              (end === null
                ? db.query(`SELECT ${columns} FROM ${table} WHERE term >= ?`, [utf8(p)])
                : db.query(`SELECT ${columns} FROM ${table} WHERE term >= ? AND term < ?`, [utf8(p), utf8(end)])
              ).then(([rows]) => (rows as Row[]).filter((r) => r.term.toString('utf8').startsWith(p))),
            );
          }
          return uniqueBlocks((await Promise.all(reads)).flat().map(entry));
        },
        async read(blocks) {
          if (blocks.length === 0) return [];
          const [rows] = (await db.query(`SELECT term, first_id, data FROM ${table} WHERE (term, first_id) IN (?)`, [
            blocks.map((b) => [utf8(b.term), b.firstId]),
          ])) as unknown as [{ term: Buffer; first_id: number; data: Buffer }[]];
          const byKey = new Map(rows.map((r) => [`${Number(r.first_id)}\u0000${r.term.toString('utf8')}`, r.data]));
          return blocks.map((b) => byKey.get(`${b.firstId}\u0000${b.term}`)!);
        },
        async totals() {
          const [rows] = (await db.query(`SELECT messages, tokens FROM ${table}_totals`)) as unknown as [
            { messages: number; tokens: number }[],
          ];
          return { messages: Number(rows[0]!.messages), tokens: Number(rows[0]!.tokens) };
        },
      };
    },
    async drop() {
      await db.end();
      await admin.query(`DROP DATABASE IF EXISTS \`${name}\``);
      await admin.end();
    },
  };
}
