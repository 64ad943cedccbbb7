/**
 * evaluateRow: FTS5's verdict on one row, computed in TypeScript (verify judges a message with it).
 * Checked against SQLite's FTS5 itself (Hermes' messages_fts: unicode61, remove_diacritics=1) on generated rows
 * and queries, and its ASCII path (regular expressions, no per-token strings) and its numbered-token path
 * (non-ASCII rows, trigram substrings) against the general path over token strings.
 */
import Database from 'better-sqlite3';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { evaluateRow, evaluateTokenizedRow, tokenCount } from '../../src/search/fts5-match.js';
import { parseQuery } from '../../src/search/query.js';
import { trigramTokens, unicode61Tokens } from '../../src/search/tokenize.js';
import { fts5Match } from '../../src/db/sqlite/search.js';

const WORDS = ['alpha', 'Alpha', 'ALPHA', 'alp', 'beta', 'be', 'x1', '1x', 'a', 'gamma', 'alphabet'];
const ACCENTED = ['álpha', 'BÉTA', 'naïve', 'straße', '日本語', 'ωmega'];
const GAPS = [' ', '  ', '.', '-', '_', "'", ', ', '\n', ':', '/'];

const text = (words: string[]) =>
  fc
    .array(fc.tuple(fc.constantFrom(...words), fc.constantFrom(...GAPS)), { maxLength: 14 })
    .map((parts) => parts.map(([w, g]) => w + g).join(''));

const phrase = fc.oneof(
  fc.constantFrom('alpha', 'beta', 'alp*', 'be*', 'x1', 'a', 'gamma', 'naive', 'strasse', 'omega'),
  fc.constantFrom('"alpha beta"', '"alpha alpha"', '"beta alp"*', '"x1 a"', '"a a"'),
);
const query = fc
  .array(fc.tuple(phrase, fc.constantFrom(' ', ' AND ', ' OR ', ' NOT ')), { minLength: 1, maxLength: 4 })
  .map((parts) => parts.map(([p, op], i) => (i === 0 ? p : op + p)).join(''));

describe('evaluateRow', () => {
  const db = new Database(':memory:');
  db.exec('CREATE VIRTUAL TABLE fts USING fts5(content)');
  afterAll(() => db.close());

  it("matches the rows FTS5 matches, and counts the row's tokens as bm25 does (2,000 cases)", () => {
    fc.assert(
      fc.property(fc.array(text([...WORDS, ...ACCENTED]), { minLength: 1, maxLength: 6 }), query, (rows, q) => {
        const parsed = parseQuery(q, 'words');
        if (!parsed.ok) return;
        db.exec('DELETE FROM fts');
        const insert = db.prepare('INSERT INTO fts (rowid, content) VALUES (?, ?)');
        for (const [i, r] of rows.entries()) insert.run(i + 1, r);
        const expected = (
          db
            .prepare('SELECT rowid FROM fts WHERE fts MATCH ? ORDER BY rowid')
            .pluck()
            .all(fts5Match(parsed.root)) as number[]
        ).map(Number);
        const got = rows.flatMap((r, i) => (evaluateRow(parsed.root, r, 'words').match ? [i + 1] : []));
        expect(got, q).toEqual(expected);
        // fts5vocab would count the same; the token count is what bm25 reads as the row's length.
        for (const r of rows) expect(evaluateRow(parsed.root, r, 'words').length).toBe(unicode61Tokens(r).length);
      }),
      { numRuns: 2000 },
    );
  });

  it('gives the same verdict, frequencies and length on its ASCII path as on the general path (3,000 cases)', () => {
    fc.assert(
      fc.property(text(WORDS), query, (row, q) => {
        const parsed = parseQuery(q, 'words');
        if (!parsed.ok) return;
        const general = evaluateTokenizedRow(
          parsed.root,
          unicode61Tokens(row).map((t) => t.text),
          'words',
        );
        expect(evaluateRow(parsed.root, row, 'words'), `${q} | ${row}`).toEqual(general);
        expect(tokenCount(row)).toBe(general.length);
      }),
      { numRuns: 3000 },
    );
  });

  // Up to 12 phrases: past 8, each token's positions are indexed instead of scanned.
  const manyPhrases = fc
    .array(fc.tuple(phrase, fc.constantFrom(' ', ' OR ', ' NOT ')), { minLength: 1, maxLength: 12 })
    .map((parts) => parts.map(([p, op], i) => (i === 0 ? p : op + p)).join(''));
  const substrings = fc
    .array(fc.constantFrom('pha', 'lpha', 'alp', 'bet', 'amm', 'ßen', '日本', '本語', 'ωme', 'x1 a', 'a a', '"be_t"'), {
      minLength: 1,
      maxLength: 12,
    })
    .map((parts) => parts.join(' OR '));

  it.each([
    { mode: 'words' as const, tokens: (row: string) => unicode61Tokens(row), queries: manyPhrases },
    { mode: 'substrings' as const, tokens: (row: string) => trigramTokens(row), queries: substrings },
  ])(
    'gives the same verdict, frequencies and length on its numbered-token path as on the general path ($mode, 2,000 cases)',
    ({ mode, tokens, queries }) => {
      fc.assert(
        fc.property(text([...WORDS, ...ACCENTED]), queries, (row, q) => {
          const parsed = parseQuery(q, mode);
          if (!parsed.ok) return;
          const general = evaluateTokenizedRow(
            parsed.root,
            tokens(row).map((t) => t.text),
            mode,
          );
          expect(evaluateRow(parsed.root, row, mode), `${q} | ${row}`).toEqual(general);
        }),
        { numRuns: 2000 },
      );
    },
  );
});
