/**
 * The search core over postings blocks answers as FTS5 at a heavy user's scale: 20,000 messages in many scripts
 * (Devanagari, Thai, Tamil, Arabic, Hebrew, Cyrillic, Greek, Turkish dotted and dotless i, ß, NFC and NFD
 * accents, emoji, CJK, mixed-script code terms, English), indexed as merged blocks plus a recent segment, for
 * every query class on the word index and CJK substrings on the trigram index, first and deeper pages: the same
 * ids, order and bm25 scores as SQLite's FTS5 tables given the same rows.
 */
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { routeCjk } from '../../src/search/cjk.js';
import { indexText } from '../../src/search/postings.js';
import { mergeRecent, postingsReader } from '../../src/search/postings-index.js';
import type { QueryMode } from '../../src/search/query.js';
import { rankPostings } from '../../src/search/rank-postings.js';
import { sanitizeFts5Query } from '../../src/search/sanitize.js';
import { CODE, EN, corpus, rng } from '../helpers/corpus.js';
import { MemoryPostingsStorage } from '../helpers/memory-postings.js';
import { SCRIPT_WORDS, multilingualTexts } from '../helpers/multilingual.js';

const TEXTS = [...multilingualTexts(12_000, 41), ...corpus(8_000, 41).map((m) => m.content)];

/** The queries a user types, sanitized as Hermes sanitizes them, routed to the index Hermes would use. */
function queries(): { match: string; mode: QueryMode; query: string }[] {
  const random = rng(43);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)]!;
  const words = [...Object.values(SCRIPT_WORDS).flat(), ...EN];
  const raw: string[] = [...words, ...CODE];
  for (const w of words.filter((w) => [...w].length >= 4)) raw.push(`${[...w].slice(0, 3).join('')}*`);
  for (let i = 0; i < 60; i++) {
    const text = pick(TEXTS).split(/\s+/).filter(Boolean);
    if (text.length < 3) continue;
    const at = Math.floor(random() * (text.length - 2));
    raw.push(`"${text.slice(at, at + 2).join(' ')}"`, `"${text.slice(at, at + 3).join(' ')}"`);
  }
  for (let i = 0; i < 40; i++)
    raw.push(`${pick(words)} OR ${pick(words)}`, `${pick(words)} ${pick(words)}`, `${pick(words)} NOT ${pick(words)}`);
  const runs = TEXTS.flatMap(
    (t) => t.match(/[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]{3,}/gu) ?? [],
  );
  for (let i = 0; i < 60; i++) {
    const run = [...pick(runs)];
    const n = 3 + Math.floor(random() * Math.min(3, run.length - 2));
    const at = Math.floor(random() * (run.length - n + 1));
    raw.push(run.slice(at, at + n).join(''));
  }
  const out: { match: string; mode: QueryMode; query: string }[] = [];
  for (const query of new Set(raw)) {
    const sanitized = sanitizeFts5Query(query);
    if (!sanitized) continue;
    if (!/[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]/u.test(sanitized)) {
      out.push({ match: sanitized, mode: 'words', query });
      continue;
    }
    const route = routeCjk(sanitized);
    if (route.path === 'trigram') out.push({ match: route.query, mode: 'substrings', query });
  }
  return out;
}

describe('search over postings blocks at 20,000 messages in many scripts', () => {
  it('answers every query class as FTS5, words and CJK substrings, the first 60 (pages 1 to 3 of 20)', async () => {
    const tables = new Database(':memory:');
    try {
      tables.exec(`CREATE VIRTUAL TABLE words USING fts5(content);
        CREATE VIRTUAL TABLE trigrams USING fts5(content, tokenize='trigram');`);
      const insertWords = tables.prepare('INSERT INTO words(rowid, content) VALUES (?, ?)');
      const insertTrigrams = tables.prepare('INSERT INTO trigrams(rowid, content) VALUES (?, ?)');
      tables.transaction(() => {
        for (const [i, text] of TEXTS.entries()) {
          insertWords.run(i + 1, text);
          insertTrigrams.run(i + 1, text);
        }
      })();
      const storages = { words: new MemoryPostingsStorage(), substrings: new MemoryPostingsStorage() };
      for (const mode of ['words', 'substrings'] as const) {
        const storage = storages[mode];
        for (const [i, text] of TEXTS.entries()) {
          storage.append({ id: i + 1, indexed: indexText(text, mode) });
          // Merged in runs, the newest 1,500 left in the recent segment.
          if ((i + 1) % 3_000 === 0 && i + 1 <= TEXTS.length - 1_500) await mergeRecent(storage);
        }
        expect(storage.recentMessages.size).toBe(2_000);
      }
      const list = queries();
      let compared = 0;
      let nonEmpty = 0;
      for (const { match, mode, query } of list) {
        const table = mode === 'words' ? 'words' : 'trigrams';
        let expected: { id: number; score: number }[];
        try {
          expected = tables
            .prepare(
              `SELECT rowid AS id, bm25(${table}) AS score FROM ${table} WHERE ${table} MATCH ? ORDER BY score, rowid LIMIT 60`,
            )
            .all(match) as { id: number; score: number }[];
        } catch {
          // FTS5 rejects the query: Hermes answers nothing, and so must we.
          expected = [];
        }
        const got = await rankPostings(match, postingsReader(storages[mode]), 60, mode);
        expect(got.ids, query).toEqual(expected.map((r) => r.id));
        for (const [i, r] of expected.entries()) expect(got.scores[i]).toBeCloseTo(r.score, 9);
        compared++;
        if (expected.length > 40) nonEmpty++;
      }
      expect(list.filter((q) => q.mode === 'substrings').length).toBeGreaterThan(40);
      expect(compared).toBeGreaterThan(250);
      expect(nonEmpty).toBeGreaterThan(150);
    } finally {
      tables.close();
    }
  }, 120_000);
});
