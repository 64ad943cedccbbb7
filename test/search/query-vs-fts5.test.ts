/**
 * The query parser against real FTS5: for generated queries, "FTS5 raises" must equal "the parser says
 * invalid", and MATCH of the emitted query must return exactly what MATCH of the sanitized query does.
 */
import Database from 'better-sqlite3';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { parseQuery, sanitizeFts5Query } from '../../src/index.js';
import { fts5Match } from '../../src/db/sqlite/search.js';

const db = new Database(':memory:');
db.exec("CREATE VIRTUAL TABLE w USING fts5(content); CREATE VIRTUAL TABLE t USING fts5(content, tokenize='trigram')");
const DOCS = [
  'a b c',
  'ab abc',
  'docker café',
  'x-y p2.2 sp_new',
  '记忆断裂问题',
  'a',
  'b c',
  'abc docker',
  'NEAR and or not',
  'cafe x y',
  'chat-send now',
];
DOCS.forEach((doc, i) => {
  db.prepare('INSERT INTO w(rowid, content) VALUES (?, ?)').run(i + 1, doc);
  db.prepare('INSERT INTO t(rowid, content) VALUES (?, ?)').run(i + 1, doc);
});
afterAll(() => db.close());

const match = (table: string, q: string): string => {
  try {
    return db.prepare(`SELECT rowid FROM ${table} WHERE ${table} MATCH ? ORDER BY rowid`).pluck().all(q).join(',');
  } catch {
    return 'error';
  }
};

const PIECES = [
  'a',
  'b',
  'c',
  'ab',
  'abc',
  'docker',
  'Café',
  'cafe',
  'x-y',
  'p2.2',
  'sp_new',
  '记忆断裂',
  '记忆',
  'AND',
  'OR',
  'NOT',
  'and',
  'NEAR',
  '*',
  '"',
  '-',
  ':',
  'content:',
  '.',
  '#',
  '""',
  '"a b"',
  'a*',
  '(',
  ')',
  '^',
  '+',
  'chat-send',
  'NOT*',
  '- content:',
];

describe('parser vs FTS5', () => {
  it.each([
    ['w', 'words'],
    ['t', 'substrings'],
  ] as const)('agrees with FTS5 on %s (%s)', (table, mode) => {
    fc.assert(
      fc.property(
        fc.array(fc.constantFrom(...PIECES), { minLength: 1, maxLength: 6 }),
        fc.boolean(),
        (pieces, glue) => {
          const q = sanitizeFts5Query(pieces.join(glue ? '' : ' '));
          if (!q) return;
          const expected = match(table, q);
          const parsed = parseQuery(q, mode);
          const ours = parsed.ok ? match(table, fts5Match(parsed.root)) : parsed.reason === 'invalid' ? 'error' : '';
          // An FTS5 error and "no rows" are the same to a caller (both give []); anything else must agree.
          expect(ours === 'error' ? '' : ours).toBe(expected === 'error' ? '' : expected);
          if (expected === 'error') expect(parsed.ok && match(table, fts5Match(parsed.root)) !== '').toBe(false);
        },
      ),
      { numRuns: 3000 },
    );
  });
});
