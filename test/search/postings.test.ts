/**
 * Postings built by our tokenizer hold what FTS5 holds for the same text: for every term, the same messages
 * and the same token offsets (FTS5's own `fts5vocab` instance table is the oracle), on texts in many scripts;
 * and the varint encoding gives back what it was given.
 */
import Database from 'better-sqlite3';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  type Posting,
  decodePostings,
  decodeIndexed,
  decodeVarints,
  encodeIndexed,
  encodePostings,
  encodeVarints,
  indexText,
} from '../../src/search/postings.js';
import type { QueryMode } from '../../src/search/query.js';
import { multilingualTexts } from '../helpers/multilingual.js';

/** term -> id -> offsets, from an index built one way or the other. */
type Lists = Map<string, Map<number, number[]>>;

function fts5Lists(texts: string[], tokenize: string): Lists {
  const db = new Database(':memory:');
  try {
    db.exec(`CREATE VIRTUAL TABLE t USING fts5(content, tokenize='${tokenize}');
      CREATE VIRTUAL TABLE v USING fts5vocab(t, instance);`);
    const insert = db.prepare('INSERT INTO t(rowid, content) VALUES (?, ?)');
    db.transaction(() => {
      for (const [i, text] of texts.entries()) insert.run(i + 1, text);
    })();
    const lists: Lists = new Map();
    const rows = db.prepare('SELECT term, doc, offset FROM v ORDER BY term, doc, offset').iterate() as Iterable<{
      term: string;
      doc: number;
      offset: number;
    }>;
    for (const { term, doc, offset } of rows) {
      let byDoc = lists.get(term);
      if (!byDoc) {
        byDoc = new Map();
        lists.set(term, byDoc);
      }
      byDoc.set(doc, [...(byDoc.get(doc) ?? []), offset]);
    }
    return lists;
  } finally {
    db.close();
  }
}

/** Our lists, through the encoding: each term's postings encoded and decoded again. */
function ourLists(texts: string[], mode: QueryMode): Lists {
  const building = new Map<string, Posting[]>();
  texts.forEach((text, i) => {
    for (const [term, positions] of indexText(text, mode).terms) {
      let list = building.get(term);
      if (!list) {
        list = [];
        building.set(term, list);
      }
      list.push({ id: i + 1, positions });
    }
  });
  const lists: Lists = new Map();
  for (const [term, postings] of building)
    lists.set(term, new Map(decodePostings(encodePostings(postings)).map((p) => [p.id, p.positions])));
  return lists;
}

function differences(ours: Lists, fts5: Lists): string[] {
  const out: string[] = [];
  for (const term of new Set([...ours.keys(), ...fts5.keys()])) {
    const a = JSON.stringify([...(ours.get(term) ?? [])]);
    const b = JSON.stringify([...(fts5.get(term) ?? [])]);
    if (a !== b && out.length < 10)
      out.push(`${JSON.stringify(term)}: ours ${a.slice(0, 200)} fts5 ${b.slice(0, 200)}`);
  }
  return out;
}

describe('postings equal FTS5 on text in many scripts', () => {
  const texts = multilingualTexts(3_000, 27);

  it.each([
    ['unicode61', 'words'],
    ['trigram', 'substrings'],
  ] as const)('%s', (tokenize, mode) => {
    const fts5 = fts5Lists(texts, tokenize);
    const ours = ourLists(texts, mode);
    expect(differences(ours, fts5)).toEqual([]);
    // Not trivially equal: thousands of terms, most messages hold several.
    expect(fts5.size).toBeGreaterThan(mode === 'words' ? 80 : 500);
  });

  it('gives each text its length in tokens, as FTS5 counts it', () => {
    const counted = new Map<number, number>();
    for (const byDoc of fts5Lists(texts, 'unicode61').values())
      for (const [doc, offsets] of byDoc) counted.set(doc, (counted.get(doc) ?? 0) + offsets.length);
    for (const [i, text] of texts.entries())
      expect(indexText(text, 'words').length, text).toBe(counted.get(i + 1) ?? 0);
  });
});

describe('postings encoding', () => {
  const posting = fc
    .tuple(
      fc.integer({ min: 1, max: Number.MAX_SAFE_INTEGER }),
      fc.uniqueArray(fc.integer({ min: 0, max: 2 ** 31 }), { minLength: 1, maxLength: 40 }),
    )
    .map(([id, positions]) => ({ id, positions: positions.sort((a, b) => a - b) }));

  it('decodes what it encoded, from any previous id', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(posting, { selector: (p) => p.id, maxLength: 60 }),
        fc.integer({ min: 0, max: 1000 }),
        (postings, previous) => {
          const list = postings
            .map((p) => ({ ...p, id: p.id + previous }))
            .filter((p) => p.id <= Number.MAX_SAFE_INTEGER);
          list.sort((a, b) => a.id - b.id);
          expect(decodePostings(encodePostings(list, previous), previous)).toEqual(list);
        },
      ),
      { numRuns: 2_000 },
    );
  });

  it('keeps any list of unsigned integers as varints', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER })), (values) => {
        expect(decodeVarints(encodeVarints(values))).toEqual(values);
      }),
      { numRuns: 1_000 },
    );
    expect([...encodeVarints([0, 127, 128, 300])]).toEqual([0, 127, 0x80, 1, 0xac, 2]);
  });

  it('spends one byte per small delta', () => {
    const bytes = encodePostings([
      { id: 5, positions: [0, 3] },
      { id: 7, positions: [1] },
    ]);
    expect([...bytes]).toEqual([5, 2, 0, 3, 2, 1, 1]);
  });

  it('refuses ids out of order and positions that do not ascend', () => {
    expect(() => encodePostings([{ id: 3, positions: [0] }], 3)).toThrow(RangeError);
    expect(() =>
      encodePostings([
        { id: 4, positions: [0] },
        { id: 4, positions: [1] },
      ]),
    ).toThrow(RangeError);
    expect(() => encodePostings([{ id: 4, positions: [2, 2] }])).toThrow(RangeError);
    expect(() => decodePostings(Uint8Array.of(0x85))).toThrow(RangeError);
  });
});

describe("a message's indexed text as bytes (a recent-segment row)", () => {
  it('gives back every term, its positions and the length, for text in any script and both indexes', () => {
    for (const mode of ['words', 'substrings'] as const)
      for (const text of [...multilingualTexts(500, 12), '', '   ', 'a'.repeat(5_000)]) {
        const indexed = indexText(text, mode);
        const back = decodeIndexed(encodeIndexed(indexed));
        expect(back.length).toBe(indexed.length);
        expect([...back.terms]).toEqual([...indexed.terms]);
      }
  });

  it('refuses truncated, padded and non-UTF-8 bytes', () => {
    const bytes = encodeIndexed(indexText('привет мир привет', 'words'));
    expect(() => decodeIndexed(bytes.subarray(0, bytes.length - 1))).toThrow(RangeError);
    expect(() => decodeIndexed(Uint8Array.of(...bytes, 0))).toThrow(RangeError);
    // length 1, one term of 1 byte (0xff is not UTF-8), one position
    expect(() => decodeIndexed(Uint8Array.of(1, 1, 1, 0xff, 1, 0))).toThrow(TypeError);
  });
});
