/**
 * Relevance over stored postings blocks answers as FTS5 does: for word queries of every kind (whole words,
 * phrases, prefixes, OR, AND, NOT, code terms) on texts in many scripts, the same ids in the same order and the
 * same bm25 scores as SQLite's own `ORDER BY bm25(t), rowid`, first page and deeper; with tiny blocks (many
 * bounds to prune by) and with the stored size. And the bounds do their job: a common word reads a fraction
 * of its blocks.
 */
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { planSearch } from '../../src/repos/search.js';
import { BLOCK_BYTES, type PostingsBlock, encodeBlocks } from '../../src/search/postings-block.js';
import { type Posting, indexText } from '../../src/search/postings.js';
import { type PostingsReader, rankPostings } from '../../src/search/rank-postings.js';
import { sanitizeFts5Query } from '../../src/search/sanitize.js';
import type { QueryMode } from '../../src/search/query.js';
import { routeCjk } from '../../src/search/cjk.js';
import { CODE, EN, corpus, rng } from '../helpers/corpus.js';
import { SCRIPT_WORDS, multilingualTexts } from '../helpers/multilingual.js';

const TEXTS = [...multilingualTexts(4_000, 27), ...corpus(4_000, 27).map((m) => m.content)];

/** A reader over blocks kept in memory; counts what it is asked to read. */
function memoryReader(
  texts: readonly string[],
  blockBytes: number,
  mode: QueryMode = 'words',
): PostingsReader & { reads: number } {
  const lists = new Map<string, Posting[]>();
  const lengths = new Map<number, number>();
  let tokens = 0;
  texts.forEach((text, i) => {
    const { terms, length } = indexText(text, mode);
    lengths.set(i + 1, length);
    tokens += length;
    for (const [term, positions] of terms) {
      const list = lists.get(term) ?? [];
      list.push({ id: i + 1, positions });
      lists.set(term, list);
    }
  });
  const blocks: PostingsBlock[] = [];
  for (const [term, list] of lists) blocks.push(...encodeBlocks(term, list, (id) => lengths.get(id)!, blockBytes));
  const reader = {
    reads: 0,
    blocks: async (terms: readonly string[], prefixes: readonly string[]) =>
      blocks
        .filter((b) => terms.includes(b.term) || prefixes.some((p) => b.term.startsWith(p)))
        .map(({ data: _, ...entry }) => entry),
    read: async (wanted: readonly { term: string; firstId: number }[]) => {
      reader.reads += wanted.length;
      return wanted.map((w) => blocks.find((b) => b.term === w.term && b.firstId === w.firstId)!.data);
    },
    totals: async () => ({ messages: texts.length, tokens }),
  };
  return reader;
}

/** Queries of every word class, in many scripts, as a user types them (sanitized as Hermes sanitizes). */
function queries(): string[] {
  const random = rng(99);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)]!;
  const words = [...Object.values(SCRIPT_WORDS).flat(), ...EN];
  const out: string[] = [...words];
  for (const w of EN.slice(0, 12)) out.push(`${w.slice(0, 2)}*`, `${w.slice(0, 4)}*`);
  for (const w of ['सं', 'Поис', 'stra', 'ı', 'caf', 'Γει']) out.push(`${w}*`);
  for (let i = 0; i < 40; i++) {
    const text = pick(TEXTS).split(/\s+/).filter(Boolean);
    if (text.length >= 3) {
      const at = Math.floor(random() * (text.length - 2));
      out.push(`"${text.slice(at, at + 2).join(' ')}"`, `"${text.slice(at, at + 3).join(' ')}"`);
    }
  }
  for (let i = 0; i < 30; i++) {
    out.push(`${pick(words)} OR ${pick(words)}`, `${pick(words)} ${pick(words)}`, `${pick(words)} NOT ${pick(words)}`);
    out.push(
      `${pick(words)} OR ${pick(words)} ${pick(words)}`,
      `(${pick(words)} OR ${pick(words)}) NOT ${pick(words)}`,
    );
  }
  out.push(...CODE, 'deploy🚀', 'p2.2', 'sp_new', 'chat-send', 'node_modules/pkg');
  return [...new Set(out)];
}

describe('relevance over postings blocks answers as FTS5', () => {
  let fts5: Database.Database;
  beforeAll(() => {
    fts5 = new Database(':memory:');
    fts5.exec(`CREATE VIRTUAL TABLE t USING fts5(content)`);
    const insert = fts5.prepare('INSERT INTO t(rowid, content) VALUES (?, ?)');
    fts5.transaction(() => {
      for (const [i, text] of TEXTS.entries()) insert.run(i + 1, text);
    })();
  }, 60_000);
  afterAll(() => fts5?.close());

  const oracle = (match: string, limit: number) =>
    fts5
      .prepare('SELECT rowid AS id, bm25(t) AS score FROM t WHERE t MATCH ? ORDER BY score, rowid LIMIT ?')
      .all(match, limit) as { id: number; score: number }[];

  it.each([
    ['tiny blocks (64 bytes)', 64],
    ['stored blocks', BLOCK_BYTES],
  ])(
    '%s: same ids, order and scores for every query class, pages of 20 and 100',
    async (_, blockBytes) => {
      const reader = memoryReader(TEXTS, blockBytes);
      let compared = 0;
      let nonEmpty = 0;
      for (const query of queries()) {
        const plan = planSearch(query);
        if (plan.path !== 'words') continue;
        const match = sanitizeFts5Query(query);
        for (const limit of [20, 100]) {
          const expected = oracle(match, limit);
          const got = await rankPostings(match, reader, limit);
          expect(got.ids, `${query} (limit ${limit})`).toEqual(expected.map((r) => r.id));
          for (const [i, r] of expected.entries()) expect(got.scores[i]).toBeCloseTo(r.score, 9);
          compared++;
          if (expected.length > 0) nonEmpty++;
        }
      }
      expect(compared).toBeGreaterThan(500);
      expect(nonEmpty).toBeGreaterThan(400);
    },
    60_000,
  );

  it.each([
    ['a third of the messages refused', 'rowid % 3 != 0', (id: number) => id % 3 !== 0],
    ['one message in 50 accepted', 'rowid % 50 = 0', (id: number) => id % 50 === 0],
  ])(
    'with a filter (%s): the best accepted messages, as FTS5 with the same condition',
    async (_, where, keep) => {
      const reader = memoryReader(TEXTS, 64);
      let asked = 0;
      const accept = async (ids: number[]) => {
        asked += ids.length;
        return new Set(ids.filter(keep));
      };
      let nonEmpty = 0;
      for (const query of queries().filter((_, i) => i % 3 === 0)) {
        const plan = planSearch(query);
        if (plan.path !== 'words') continue;
        const match = sanitizeFts5Query(query);
        const expected = fts5
          .prepare(`SELECT rowid AS id FROM t WHERE t MATCH ? AND ${where} ORDER BY bm25(t), rowid LIMIT 20`)
          .all(match) as { id: number }[];
        const got = await rankPostings(match, reader, 20, 'words', { accept });
        expect(got.ids, query).toEqual(expected.map((r) => r.id));
        if (expected.length > 0) nonEmpty++;
      }
      expect(nonEmpty).toBeGreaterThan(50);
      expect(asked).toBeGreaterThan(0);
    },
    60_000,
  );

  it.each([
    ['no filter', '1 = 1', null],
    ['a third of the messages refused', 'rowid % 3 != 0', (id: number) => id % 3 !== 0],
  ] as const)(
    'with a rank window (%s): ranks only the newest matches when there are more, as SQLite does with FTS5',
    async (_, where, keep) => {
      const reader = memoryReader(TEXTS, 64);
      const accept = keep === null ? undefined : async (ids: number[]) => new Set(ids.filter(keep));
      let capped = 0;
      let uncapped = 0;
      for (const window of [30, 400]) {
        for (const query of queries()) {
          const plan = planSearch(query);
          if (plan.path !== 'words') continue;
          const match = sanitizeFts5Query(query);
          // SQLite's window (src/db/sqlite/search.ts): the id of the window-th newest match bounds the ranking.
          const bound = fts5
            .prepare(`SELECT rowid AS id FROM t WHERE t MATCH ? AND ${where} ORDER BY rowid DESC LIMIT 1 OFFSET ?`)
            .get(match, window - 1) as { id: number } | undefined;
          const expected = fts5
            .prepare(
              `SELECT rowid AS id FROM t WHERE t MATCH ? AND ${where} AND rowid >= ? ORDER BY bm25(t), rowid LIMIT 20`,
            )
            .all(match, bound?.id ?? 0) as { id: number }[];
          const got = await rankPostings(match, reader, 20, 'words', { accept, window });
          expect(got.ids, `${query} (window ${window})`).toEqual(expected.map((r) => r.id));
          expect(got.capped, `${query} (window ${window})`).toBe(bound !== undefined);
          if (bound !== undefined) capped++;
          else if (expected.length > 0) uncapped++;
        }
      }
      expect(capped).toBeGreaterThan(50);
      expect(uncapped).toBeGreaterThan(20);
    },
    120_000,
  );

  it('ranks every match when asked for all of them (what an order by time starts from)', async () => {
    const reader = memoryReader(TEXTS, 64);
    for (const query of ['docker', 'docker OR compose', '"error timeout"', 'dep*', 'Поиск NOT привет']) {
      const match = sanitizeFts5Query(query);
      const expected = fts5.prepare('SELECT rowid AS id FROM t WHERE t MATCH ? ORDER BY bm25(t), rowid').all(match) as {
        id: number;
      }[];
      expect(expected.length, query).toBeGreaterThan(20);
      const got = await rankPostings(match, reader, Number.POSITIVE_INFINITY);
      expect(got.ids, query).toEqual(expected.map((r) => r.id));
    }
  }, 60_000);

  it('ranks a query of more phrases than fit a bit mask (40 words OR-ed, 40 under NOT and AND) as FTS5', async () => {
    const reader = memoryReader(TEXTS, 64);
    const words = [...Object.values(SCRIPT_WORDS).flat(), ...EN].slice(0, 40);
    for (const query of [
      words.join(' OR '),
      `(${words.slice(0, 20).join(' OR ')}) NOT (${words.slice(20).join(' OR ')})`,
      `"${words[0]}*" (${words.slice(1, 36).join(' OR ')})`,
    ]) {
      const match = sanitizeFts5Query(query);
      const expected = oracle(match, 50);
      expect(expected.length, query).toBeGreaterThan(0);
      const got = await rankPostings(match, reader, 50);
      expect(got.ids, query).toEqual(expected.map((r) => r.id));
    }
  }, 60_000);

  it('a common word reads a fraction of its blocks: the bounds stop the reading', async () => {
    const reader = memoryReader(TEXTS, 64);
    const got = await rankPostings('docker', reader, 20);
    expect(got.blocksListed).toBeGreaterThan(50);
    expect(got.blocksRead).toBeLessThan(got.blocksListed / 2);
    expect(got.ids).toEqual(oracle('docker', 20).map((r) => r.id));
  }, 60_000);

  it.each([
    ['tiny blocks (64 bytes)', 64],
    ['stored blocks', BLOCK_BYTES],
  ])(
    'substrings, %s: the trigram index ranks CJK and other substrings as FTS5 does',
    async (_, blockBytes) => {
      const trigram = new Database(':memory:');
      try {
        trigram.exec(`CREATE VIRTUAL TABLE t USING fts5(content, tokenize='trigram')`);
        const insert = trigram.prepare('INSERT INTO t(rowid, content) VALUES (?, ?)');
        trigram.transaction(() => {
          for (const [i, text] of TEXTS.entries()) insert.run(i + 1, text);
        })();
        const reader = memoryReader(TEXTS, blockBytes, 'substrings');
        const random = rng(7);
        const runs = TEXTS.flatMap(
          (t) => t.match(/[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]{3,}/gu) ?? [],
        );
        const queries = new Set<string>();
        for (let i = 0; i < 60; i++) {
          const run = [...runs[Math.floor(random() * runs.length)]!];
          const n = 3 + Math.floor(random() * Math.min(4, run.length - 2));
          const at = Math.floor(random() * (run.length - n + 1));
          queries.add(run.slice(at, at + n).join(''));
        }
        const singles = [...queries];
        const list = [...singles];
        for (let i = 0; i + 1 < singles.length; i += 2)
          list.push(`${singles[i]} OR ${singles[i + 1]}`, `${singles[i]} ${singles[i + 1]}`);
        list.push('服务器 OR docker', '数据库迁移 NOT 服务器');
        let nonEmpty = 0;
        for (const query of list) {
          const route = routeCjk(sanitizeFts5Query(query));
          if (route.path !== 'trigram') continue;
          for (const limit of [20, 100]) {
            const expected = trigram
              .prepare('SELECT rowid AS id, bm25(t) AS score FROM t WHERE t MATCH ? ORDER BY score, rowid LIMIT ?')
              .all(route.query, limit) as { id: number; score: number }[];
            const got = await rankPostings(route.query, reader, limit, 'substrings');
            expect(got.ids, `${query} (limit ${limit})`).toEqual(expected.map((r) => r.id));
            for (const [i, r] of expected.entries()) expect(got.scores[i]).toBeCloseTo(r.score, 9);
            if (expected.length > 0) nonEmpty++;
          }
        }
        expect(nonEmpty).toBeGreaterThan(100);
      } finally {
        trigram.close();
      }
    },
    60_000,
  );
});
