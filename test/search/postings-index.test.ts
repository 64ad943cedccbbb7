/**
 * An index kept as merged blocks plus a recent segment answers as FTS5 after any history of appends (some
 * committing late, below ids already merged), merges (whole or partial) and removals (of merged and of recent
 * messages): for words and for trigrams, the same ids, order and scores as an FTS5 table given the same rows,
 * after every step; and the blocks stay disjoint and ascending per term.
 */
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { indexText } from '../../src/search/postings.js';
import type { PostingsBlock } from '../../src/search/postings-block.js';
import { PostingsBuilder } from '../../src/search/postings-build.js';
import { mergeRecent, postingsReader, removeMessages } from '../../src/search/postings-index.js';
import type { QueryMode } from '../../src/search/query.js';
import { rankPostings } from '../../src/search/rank-postings.js';
import { corpus, rng } from '../helpers/corpus.js';
import { MemoryPostingsStorage } from '../helpers/memory-postings.js';
import { multilingualTexts } from '../helpers/multilingual.js';

const TEXTS = [...multilingualTexts(2_500, 31), ...corpus(2_500, 31).map((m) => m.content)];

const QUERIES: Record<QueryMode, string[]> = {
  words: [
    'docker',
    'the',
    'error OR timeout',
    'deploy compose',
    '"Поиск сообщение"',
    'dep*',
    'ş*',
    'stra*',
    'café NOT résumé',
    'नमस्ते',
    'İstanbul',
    'chat-send',
  ].map((q) => (q.includes('-') ? `"${q}"` : q)),
  substrings: [
    '"记忆断裂"',
    '"数据库迁移"',
    '"服务器"',
    '"こんにちは"',
    '"안녕하세요" OR "服务器"',
    '"数据库" NOT "迁移"',
  ],
};

function blocksAreOrdered(storage: MemoryPostingsStorage): void {
  for (const [term, byFirst] of storage.blocks) {
    const blocks = [...byFirst.values()].sort((a, b) => a.firstId - b.firstId);
    for (let i = 1; i < blocks.length; i++)
      expect(blocks[i]!.firstId, `${term}: blocks overlap`).toBeGreaterThan(blocks[i - 1]!.lastId);
  }
}

describe('an index of merged blocks and a recent segment', () => {
  it.each(['words', 'substrings'] as const)(
    '%s: answers as FTS5 after appends (some late), merges and removals, at every step',
    async (mode) => {
      const fts5 = new Database(':memory:');
      try {
        fts5.exec(`CREATE VIRTUAL TABLE t USING fts5(content${mode === 'substrings' ? ", tokenize='trigram'" : ''})`);
        const insert = fts5.prepare('INSERT INTO t(rowid, content) VALUES (?, ?)');
        const remove = fts5.prepare('DELETE FROM t WHERE rowid = ?');
        const storage = new MemoryPostingsStorage();
        const random = rng(mode === 'words' ? 5 : 6);
        const live = new Set<number>();
        const message = (id: number) => ({ id, indexed: indexText(TEXTS[id - 1]!, mode) });
        let late: number[] = [];
        let steps = 0;
        let compared = 0;

        const check = async () => {
          blocksAreOrdered(storage);
          for (const query of QUERIES[mode]) {
            const expected = fts5
              .prepare('SELECT rowid AS id, bm25(t) AS score FROM t WHERE t MATCH ? ORDER BY score, rowid LIMIT 20')
              .all(query) as { id: number; score: number }[];
            const got = await rankPostings(query, postingsReader(storage), 20, mode);
            expect(got.ids, `step ${steps}: ${query}`).toEqual(expected.map((r) => r.id));
            for (const [i, r] of expected.entries()) expect(got.scores[i]).toBeCloseTo(r.score, 9);
            if (expected.length > 0) compared++;
          }
          steps++;
        };

        for (let from = 1; from <= TEXTS.length; from += 250) {
          // Append a batch; one id in twenty commits late, after the next merge.
          const batch = Array.from({ length: Math.min(250, TEXTS.length - from + 1) }, (_, k) => from + k);
          const held = batch.filter(() => random() < 0.05);
          for (const id of [...late, ...batch.filter((id) => !held.includes(id))]) {
            storage.append(message(id));
            insert.run(id, TEXTS[id - 1]!);
            live.add(id);
          }
          late = held;
          await check();
          // Merge all, part, or nothing yet.
          const r = random();
          if (r < 0.5) await mergeRecent(storage);
          else if (r < 0.8) await mergeRecent(storage, Math.floor(random() * 200));
          await check();
          // Remove a few messages, merged or still recent.
          const ids = [...live];
          const gone = [...new Set(Array.from({ length: 15 }, () => ids[Math.floor(random() * ids.length)]!))];
          await removeMessages(storage, gone.map(message));
          for (const id of gone) {
            remove.run(id);
            live.delete(id);
          }
          await check();
        }
        await mergeRecent(storage);
        expect(storage.recentMessages.size).toBe(0);
        await check();
        expect(steps).toBeGreaterThan(60);
        expect(compared).toBeGreaterThan(steps * 3);
      } finally {
        fts5.close();
      }
    },
    60_000,
  );
});

describe('an index built in one pass', () => {
  it.each(['words', 'substrings'] as const)(
    '%s: writes the blocks and totals a merge of the same messages into an empty index writes',
    async (mode) => {
      const messages = TEXTS.slice(0, 1_500).map((text, i) => ({ id: i + 1, indexed: indexText(text, mode) }));
      const merged = new MemoryPostingsStorage();
      for (const m of messages) merged.append(m);
      await mergeRecent(merged);
      const builder = new PostingsBuilder();
      for (const m of messages) builder.add(m.id, m.indexed);
      expect(() => builder.add(1, messages[0]!.indexed)).toThrow(/does not follow/);
      const built = [...builder.blocks(64 * 1024)].flat();
      const key = (b: PostingsBlock) => `${b.term}\u0000${b.firstId}`;
      const expected = [...merged.blocks.values()].flatMap((byFirst) => [...byFirst.values()]);
      expect(built.length).toBeGreaterThan(50);
      // Terms span several of the builder's chunks of postings and, for trigrams, several blocks.
      expect(Math.max(...built.map((b) => b.count))).toBeGreaterThan(100);
      if (mode === 'substrings') expect(new Set(built.map((b) => b.term)).size).toBeLessThan(built.length);
      expect(new Map(built.map((b) => [key(b), b]))).toEqual(new Map(expected.map((b) => [key(b), b])));
      expect({ messages: builder.messages, tokens: builder.tokens }).toEqual(await merged.mergedTotals());
      // Terms come in order, each term's blocks by first id: a table keyed so fills its pages in order.
      const keys = built.map((b) => [b.term, b.firstId] as const);
      const sorted = [...keys].sort(([a, x], [b, y]) => (a < b ? -1 : a > b ? 1 : x - y));
      expect(keys).toEqual(sorted);
      expect(() => builder.add(messages.length + 1, messages[0]!.indexed)).toThrow(/after blocks/);
      expect(() => [...builder.blocks()]).toThrow(/twice/);
    },
  );
});
