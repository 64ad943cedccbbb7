/**
 * The TypeScript snippet() against SQLite's own: generated documents and queries on a unicode61 and a
 * trigram FTS5 table, every matching row's `snippet(t, 0, '>>>', '<<<', '...', 40)` compared with
 * fts5Snippet(). Plus the tokenizers against SQLite. The cost of huge rows: fts5-snippet-huge.test.ts.
 *
 * Kept out of the generators, on purpose (the emulation cannot or need not be equal there):
 *  - NUL characters: snippet() builds its result with "%.*s", which stops at a NUL;
 *  - lone surrogates: SQLite stores them as U+FFFD, so its snippet carries U+FFFD where the text has them;
 *  - tokens over 32 KB: FTS5 indexes only their first 32,768 bytes.
 */
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { planSearch } from '../../src/repos/search.js';
import { matchingInstances } from '../../src/search/fts5-match.js';
import { SNIPPET_FULL_CHARS, SNIPPET_SCAN_CHARS, fts5Snippet, fts5SnippetFull } from '../../src/search/fts5-snippet.js';
import { type QueryMode, type QueryNode, parseQuery } from '../../src/search/query.js';
import { sanitizeFts5Query } from '../../src/search/sanitize.js';
import { phraseTokens, trigramTokens, unicode61Tokens } from '../../src/search/tokenize.js';
import { fts5Match } from '../../src/db/sqlite/search.js';
import { COMMON } from '../helpers/words.js';

const db = new Database(':memory:');
db.exec(`CREATE VIRTUAL TABLE t USING fts5(content);
  CREATE VIRTUAL TABLE tg USING fts5(content, tokenize='trigram');
  CREATE VIRTUAL TABLE tv USING fts5vocab(t, instance);
  CREATE VIRTUAL TABLE tgv USING fts5vocab(tg, instance);`);
afterAll(() => db.close());

/** mulberry32: a small seeded generator, so failures reproduce. */
function rng(seed: number) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (n: number) => Math.floor(next() * n);
  return { next, int, pick: <T>(xs: readonly T[]): T => xs[int(xs.length)]! };
}

const TECH = (
  'docker dock docking docs document compose container deploy server config install update needle match matches matching ' +
  'error warning fix bug test tests testing run running build python node npm git commit push pull branch merge session ' +
  'message search index query token tokens snippet highlight sentence window score'
).split(' ');
const WORDS = [...COMMON, ...TECH];
const COMPOUNDS = [
  'chat-send',
  'p2.2',
  'P2.2',
  'simulate.p2.test.ts',
  'snake_case_thing',
  'sp_new',
  'x-y',
  'v1.2.3',
  'e-mail',
  'foo_bar-baz.qux',
];
const ACCENTED = [
  'café',
  'Café',
  'CAFÉ',
  'cafe',
  'Übersicht',
  'übersicht',
  'naïve',
  'résumé',
  'Ärger',
  'straße',
  'ÉCOLE',
  'São',
  'Ångström',
  'crème',
  'Łódź',
  'İstanbul',
  'ΣΊΣΥΦΟΣ',
  'Привет',
  'ﬁle',
];
const CJK = [
  '记忆断裂问题',
  '我们的记忆',
  '数据库连接失败',
  '日本語のテキスト',
  '한국어 문장',
  '断裂',
  '记忆断裂',
  'テスト中です',
  '问题记忆',
];
const OTHER = [
  '42',
  '3.14',
  '2024-01-02',
  'x',
  'I',
  'ID',
  'ok',
  'HTTP/2',
  'e.g.',
  'i.e.',
  '#tag',
  '@user',
  '$HOME',
  '~/.config',
  "don't",
  'naïveté',
];
const PUNCT_AFTER = [',', ',', ';', '!', '?', ')', '"', "'", '...', ' -', ''];
const SENTENCE_END = ['. ', '.  ', ': ', '.\n', ':\n', '.\n\n', '.\t', '.', ':', '! ', '? ', '.\r\n'];

function makeDoc(r: ReturnType<typeof rng>): string {
  const long = r.next() < 0.12;
  const nTokens = long ? 100 + r.int(1900) : 1 + r.int(r.next() < 0.5 ? 12 : 120);
  const hot = r.next() < 0.3 ? r.pick(TECH) : null; // repeated matches
  let out = r.next() < 0.1 ? r.pick([' ', '\n', '(', '"', '- ']) : '';
  let sentence = 0;
  for (let i = 0; i < nTokens; i++) {
    const x = r.next();
    let w =
      hot && x < 0.15
        ? hot
        : x < 0.72
          ? r.pick(WORDS)
          : x < 0.8
            ? r.pick(COMPOUNDS)
            : x < 0.88
              ? r.pick(ACCENTED)
              : x < 0.94
                ? r.pick(CJK)
                : r.pick(OTHER);
    if (sentence === 0 && r.next() < 0.6) w = w.charAt(0).toUpperCase() + w.slice(1);
    else if (r.next() < 0.05) w = w.toUpperCase();
    out += w;
    sentence++;
    if (i === nTokens - 1) break;
    const y = r.next();
    if (y < 0.1 && sentence > 2) {
      out += r.pick(SENTENCE_END);
      sentence = 0;
    } else if (y < 0.2) out += `${r.pick(PUNCT_AFTER)} `;
    else if (y < 0.23) out += r.pick(['\n', '  ', '\t', ' \n ', ' - ', '/', '(']);
    else out += ' ';
  }
  const z = r.next();
  if (z < 0.2) out += r.pick(SENTENCE_END).trimEnd();
  // Hermes indexes content || ' ' || tool_name || ' ' || tool_calls.
  if (r.next() < 0.3)
    out += ` ${r.next() < 0.5 ? r.pick(['terminal', 'web_search', 'read_file']) : ''} ${r.next() < 0.5 ? '[{"name": "terminal", "args": {"cmd": "docker ps"}}]' : ''}`;
  return out;
}

const r = rng(20240611);
const DOCS: string[] = [];
for (let i = 0; i < 3000; i++) DOCS.push(makeDoc(r));
// Specific documents for the named cases.
const NAMED = [
  'Use docker compose up.  ',
  'Please find the needle match here; a needle and a match apart.',
  'We should chat-send it. chat send is two words: chat-send',
  'Phase P2.2 is done. Next: p2.3',
  // Structured content as Hermes stores it: a NUL, then "json:" and the JSON.
  '\u0000json:[{"type": "text", "text": "Luplai biogebio say houmi treawin."}, {"type": "image_url"}]  ',
];
DOCS.push(...NAMED);
{
  const insert = db.prepare('INSERT INTO t(rowid, content) VALUES (?, ?)');
  const insertTg = db.prepare('INSERT INTO tg(rowid, content) VALUES (?, ?)');
  db.transaction(() => {
    for (const [i, d] of DOCS.entries()) {
      insert.run(i + 1, d);
      insertTg.run(i + 1, d);
    }
  })();
}

type Row = { content: string; snippet: string };
const rowsFor = (table: 't' | 'tg', root: QueryNode): Row[] =>
  db
    .prepare(
      `SELECT content, snippet(${table}, 0, '>>>', '<<<', '...', 40) AS snippet FROM ${table} WHERE ${table} MATCH ? ORDER BY rowid`,
    )
    .all(fts5Match(root)) as Row[];

function compare(
  table: 't' | 'tg',
  mode: QueryMode,
  root: QueryNode,
  query: string,
  stats: { comparisons: number; mismatches: string[] },
) {
  for (const row of rowsFor(table, root)) {
    stats.comparisons++;
    const ours = fts5Snippet(row.content, root, { mode });
    if (ours !== row.snippet && stats.mismatches.length < 10) {
      stats.mismatches.push(
        `${query}\n  text:   ${JSON.stringify(row.content.slice(0, 300))}\n  fts5:   ${JSON.stringify(row.snippet)}\n  ours:   ${JSON.stringify(ours)}`,
      );
    } else if (ours !== row.snippet) stats.mismatches.push('');
  }
}

/** Words of the documents, as written (the sanitizer and the parser see them as a user would type them). */
const docWords = (doc: string) => doc.split(/[\s,;!?()"']+/).filter((w) => w.length > 0 && !/^[.:\-/]+$/.test(w));

function wordQuery(q: ReturnType<typeof rng>): string {
  const doc = q.pick(DOCS);
  const words = docWords(doc);
  const word = () => {
    const w = words.length > 0 && q.next() < 0.7 ? q.pick(words) : q.pick([...WORDS, ...COMPOUNDS, ...ACCENTED]);
    return w.replace(/[.:]+$/, '');
  };
  const term = (): string => {
    const x = q.next();
    if (x < 0.45) return word();
    if (x < 0.6) {
      const w = q.pick(WORDS.filter((x) => x.length >= 4));
      return `${w.slice(0, 2 + q.int(w.length - 2))}*`;
    }
    if (x < 0.85) {
      // A quoted phrase of 2-3 consecutive tokens of a document, as written there.
      const toks = unicode61Tokens(doc);
      if (toks.length < 3) return word();
      const i = q.int(toks.length - 2);
      const n = 2 + q.int(2);
      const end = toks[Math.min(toks.length - 1, i + n - 1)]!.end;
      const phrase = `"${doc.slice(toks[i]!.start, end).replace(/"/g, ' ')}"`;
      if (q.next() >= 0.15) return phrase;
      // A prefix phrase: its last token cut short.
      const cut = doc.slice(toks[i]!.start, end).replace(/"/g, ' ');
      return `"${cut.slice(0, Math.max(cut.length - 2, cut.length - q.int(3)))}"*`;
    }
    return q.pick(COMPOUNDS);
  };
  const x = q.next();
  if (x < 0.45) return term();
  if (x < 0.6) return `${term()} ${term()}`;
  if (x < 0.72) return `${term()} OR ${term()}`;
  if (x < 0.8) return `${term()} AND ${term()}`;
  if (x < 0.88) return `${term()} NOT ${term()}`;
  if (x < 0.94) return `${term()} OR ${term()} ${term()}`;
  return `${term()} ${term()} OR ${term()} NOT ${term()}`;
}

function cjkQuery(q: ReturnType<typeof rng>): string {
  const run = () => {
    const s = [...q.pick(CJK).replace(/ /g, '')];
    const n = 3 + q.int(Math.max(1, s.length - 2));
    const i = q.int(Math.max(1, s.length - n + 1));
    return s.slice(i, i + n).join('');
  };
  const x = q.next();
  if (x < 0.5) return run();
  if (x < 0.65) return `${run()} ${run()}`;
  if (x < 0.8) return `${run()} OR ${run()}`;
  if (x < 0.9) return `${run()} NOT ${run()}`;
  return `${run()} ${q.pick(['docker', 'café', 'chat-send'])}`;
}

describe('fts5Snippet equals FTS5 snippet()', () => {
  it('on the unicode61 table (messages_fts)', { timeout: 300_000 }, () => {
    const stats = { comparisons: 0, mismatches: [] as string[] };
    const q = rng(7);
    let queries = 0;
    for (let i = 0; i < 160; i++) {
      const query = wordQuery(q);
      const parsed = parseQuery(sanitizeFts5Query(query), 'words');
      if (!parsed.ok) continue;
      queries++;
      compare('t', 'words', parsed.root, query, stats);
    }
    console.log(
      `unicode61: ${queries} queries, ${stats.comparisons} comparisons, ${stats.mismatches.length} mismatches`,
    );
    expect(stats.comparisons).toBeGreaterThan(50_000);
    expect(stats.mismatches.filter(Boolean).join('\n\n')).toBe('');
    expect(stats.mismatches.length).toBe(0);
  });

  it('on the trigram table (messages_fts_trigram), with queries routed as planSearch does', {
    timeout: 300_000,
  }, () => {
    const stats = { comparisons: 0, mismatches: [] as string[] };
    const q = rng(11);
    let queries = 0;
    for (let i = 0; i < 80; i++) {
      const query = cjkQuery(q);
      const plan = planSearch(query);
      if (plan.path !== 'substrings') continue;
      queries++;
      compare('tg', 'substrings', plan.match, query, stats);
    }
    // Substrings of any script (case, accents, punctuation, spaces) straight to the trigram table.
    for (let i = 0; i < 40; i++) {
      const doc = q.pick(DOCS);
      const chars = [...doc];
      if (chars.length < 4) continue;
      const n = 3 + q.int(Math.min(10, chars.length - 3));
      const at = q.int(chars.length - n + 1);
      let s = chars.slice(at, at + n).join('');
      if (q.next() < 0.3) s = s.toUpperCase();
      const parsed = parseQuery(`"${s.replace(/"/g, '""')}"`, 'substrings');
      if (!parsed.ok) continue;
      queries++;
      compare('tg', 'substrings', parsed.root, s, stats);
    }
    console.log(`trigram: ${queries} queries, ${stats.comparisons} comparisons, ${stats.mismatches.length} mismatches`);
    expect(stats.comparisons).toBeGreaterThan(20_000);
    expect(stats.mismatches.filter(Boolean).join('\n\n')).toBe('');
    expect(stats.mismatches.length).toBe(0);
  });

  it('on long rows: the windowed algorithm when the best window is near the first match', { timeout: 120_000 }, () => {
    // Rows over SNIPPET_FULL_CHARS whose matches all lie within a few thousand characters: the windowed
    // result must be FTS5's, whether the matches are at the start or in the middle of the row.
    const q = rng(99);
    const local = new Database(':memory:');
    local.exec(
      "CREATE VIRTUAL TABLE t USING fts5(content); CREATE VIRTUAL TABLE tg USING fts5(content, tokenize='trigram')",
    );
    const plain = COMMON;
    const filler = (n: number) => {
      let s = '';
      while (s.length < n) s += `${q.pick(plain)}${q.next() < 0.1 ? q.pick(SENTENCE_END) : ' '}`;
      return s;
    };
    let comparisons = 0;
    for (let i = 0; i < 40; i++) {
      const hot = ['needle', 'zebra', 'quokka', '记忆断裂', 'Übersicht'];
      let middle = '';
      for (let k = 0; k < 200; k++)
        middle += `${q.next() < 0.1 ? q.pick(hot) : q.pick(plain)}${q.next() < 0.1 ? '. ' : ' '}`;
      const before = i % 3 === 0 ? '' : filler(q.int(60_000));
      // Sometimes a word far past the first match (beyond the presence scan's budget).
      // (No sentence start within 40 tokens before it: its window scores 1000 and the earlier ones win ties.)
      const run = Array.from({ length: 50 }, () => q.pick(plain)).join(' ');
      const far =
        i % 2 === 0 ? `${filler(SNIPPET_SCAN_CHARS + q.int(20_000))} ${run} farword${q.pick(['', ' ', '.'])}` : '';
      const text = `${before}${middle}${filler(SNIPPET_FULL_CHARS + q.int(40_000))}${far}`;
      local.prepare('DELETE FROM t').run();
      local.prepare('DELETE FROM tg').run();
      local.prepare('INSERT INTO t(rowid, content) VALUES (1, ?)').run(text);
      local.prepare('INSERT INTO tg(rowid, content) VALUES (1, ?)').run(text);
      const cases: Array<[string, QueryMode]> = [
        ...[
          'needle',
          'needle OR zebra',
          'zebra quokka',
          'quo*',
          'needle NOT nonexistent',
          'nonexistent OR zebra',
          'ubersicht',
          'needle farword',
          'farword OR needle',
          'zebra NOT farword',
          'needle AND farword OR quokka',
        ].map((x): [string, QueryMode] => [x, 'words']),
        ...['"记忆断裂"', '"忆断裂"', '"needle" OR "übersicht"', '"ÜBER"', '"记忆断裂" NOT "zzz"'].map(
          (x): [string, QueryMode] => [x, 'substrings'],
        ),
      ];
      for (const [query, mode] of cases) {
        const parsed = parseQuery(query, mode);
        if (!parsed.ok) throw new Error(query);
        const table = mode === 'words' ? 't' : 'tg';
        const row = local
          .prepare(`SELECT snippet(${table}, 0, '>>>', '<<<', '...', 40) AS s FROM ${table} WHERE ${table} MATCH ?`)
          .get(fts5Match(parsed.root)) as { s: string } | undefined;
        if (!row) continue;
        comparisons++;
        expect(fts5Snippet(text, parsed.root, { mode }), query).toBe(row.s);
        expect(fts5SnippetFull(text, parsed.root, { mode }), query).toBe(row.s);
      }
    }
    local.close();
    console.log(`long rows: ${comparisons} comparisons`);
    expect(comparisons).toBeGreaterThan(100);
  });
});

describe('named cases', () => {
  const words = (query: string) => {
    const parsed = parseQuery(sanitizeFts5Query(query), 'words');
    if (!parsed.ok) throw new Error(query);
    return parsed.root;
  };
  const fts5 = (query: string, text: string) => rowsFor('t', words(query)).find((row) => row.content === text)?.snippet;

  it('a quoted phrase is one span', () => {
    const text = NAMED[1]!;
    expect(fts5Snippet(text, words('"needle match"'))).toBe(
      'Please find the >>>needle match<<< here; a needle and a match apart.',
    );
    expect(fts5('"needle match"', text)).toBe(fts5Snippet(text, words('"needle match"')));
  });

  it('a compound is one phrase of two tokens, one span', () => {
    const text = NAMED[2]!;
    // "chat send" is the same two-token phrase.
    expect(fts5Snippet(text, words('chat-send'))).toBe(
      'We should >>>chat-send<<< it. >>>chat send<<< is two words: >>>chat-send<<<',
    );
    expect(fts5('chat-send', text)).toBe(fts5Snippet(text, words('chat-send')));
  });

  it('P2.2', () => {
    const text = NAMED[3]!;
    expect(fts5Snippet(text, words('P2.2'))).toBe('Phase >>>P2.2<<< is done. Next: p2.3');
    expect(fts5('P2.2', text)).toBe(fts5Snippet(text, words('P2.2')));
  });

  it('structured content: each piece of text is cut at its NUL, as FTS5 copies pieces with "%.*s"', () => {
    const text = NAMED[4]!;
    expect(fts5Snippet(text, words('houmi'))).toBe(fts5('houmi', text));
    expect(fts5Snippet(text, words('houmi'))).toBe('>>>houmi<<< treawin."}, {"type": "image_url"}]  ');
  });

  it("Hermes' example, trailing spaces kept", () => {
    expect(fts5Snippet('Use docker compose up.  ', words('docker'))).toBe('Use >>>docker<<< compose up.  ');
    expect(fts5('docker', 'Use docker compose up.  ')).toBe('Use >>>docker<<< compose up.  ');
  });

  it('no instance: the first 40 tokens and the ellipsis, as FTS5 gives with zero instances', () => {
    const text = Array.from({ length: 50 }, (_, i) => `w${i}`).join(' ');
    const snippet = fts5Snippet(text, words('absent'));
    expect(snippet).toBe(`${Array.from({ length: 40 }, (_, i) => `w${i}`).join(' ')}...`);
    expect(fts5Snippet('short text', words('absent'))).toBe('short text');
  });

  it('matchingInstances follows FTS5: NOT right sides and non-matching OR branches do not count', () => {
    const tokens = unicode61Tokens('alpha beta gamma alpha delta');
    const inst = (q: string) =>
      matchingInstances(words(q), tokens)
        .instances.map((i) => `${i.phrase}@${i.pos}`)
        .join(' ');
    expect(inst('alpha OR zeta')).toBe('0@0 0@3');
    expect(inst('alpha NOT zeta')).toBe('0@0 0@3');
    expect(inst('alpha NOT beta')).toBe('');
    expect(inst('(zeta AND beta) OR gamma')).toBe('2@2');
    expect(inst('"beta gamma" OR delta')).toBe('0@1 1@4');
    expect(matchingInstances(words('"beta gamma"'), tokens).phraseSizes).toEqual([2]);
  });
});

describe('tokenizers against SQLite', () => {
  // Characters across scripts: every 7th code point of the BMP outside surrogates, and astral samples.
  const sample: number[] = [];
  for (let cp = 1; cp < 0x10000; cp += 7) if (cp < 0xd800 || cp > 0xdfff) sample.push(cp);
  for (let cp = 0x10000; cp < 0x30000; cp += 97) sample.push(cp);
  for (const cp of [0xe0001, 0xe0100, 0xf0000, 0x10fffd, 0x1d400, 0x1f600, 0x10400, 0x10428, 0x1e900, 0x1e922])
    sample.push(cp);
  // Diacritics, letters with them, and the ones unicode61 folds specially.
  for (let cp = 0x300; cp < 0x370; cp++) sample.push(cp);
  for (let cp = 0xc0; cp < 0x250; cp++) sample.push(cp);

  it('unicode61 and trigram give the tokens FTS5 indexes', () => {
    const q = rng(3);
    const docs: string[] = [];
    for (let i = 0; i < 1500; i++) {
      let s = '';
      const n = 1 + q.int(30);
      for (let k = 0; k < n; k++) {
        const x = q.next();
        s +=
          x < 0.6
            ? String.fromCodePoint(q.pick(sample))
            : x < 0.75
              ? ' '
              : x < 0.9
                ? q.pick(['a', 'Q', 'é', 'ß', '1'])
                : '\u0301';
      }
      docs.push(s);
    }
    const local = new Database(':memory:');
    local.exec(`CREATE VIRTUAL TABLE u USING fts5(content); CREATE VIRTUAL TABLE uv USING fts5vocab(u, instance);
      CREATE VIRTUAL TABLE g USING fts5(content, tokenize='trigram'); CREATE VIRTUAL TABLE gv USING fts5vocab(g, instance);`);
    local.transaction(() =>
      docs.forEach((d, i) => {
        local.prepare('INSERT INTO u(rowid, content) VALUES (?, ?)').run(i + 1, d);
        local.prepare('INSERT INTO g(rowid, content) VALUES (?, ?)').run(i + 1, d);
      }),
    )();
    for (const [vocab, tokenize] of [
      ['uv', unicode61Tokens],
      ['gv', trigramTokens],
    ] as const) {
      const byDoc = new Map<number, string[]>();
      for (const row of local.prepare(`SELECT term, doc FROM ${vocab} ORDER BY doc, offset`).all() as Array<{
        term: string;
        doc: number;
      }>) {
        byDoc.set(row.doc, [...(byDoc.get(row.doc) ?? []), row.term]);
      }
      for (const [i, d] of docs.entries()) {
        expect(
          tokenize(d).map((t) => t.text),
          `${vocab} ${JSON.stringify(d)}`,
        ).toEqual(byDoc.get(i + 1) ?? []);
      }
    }
    local.close();
    console.log(`tokenizers: ${docs.length} documents of ${sample.length} sampled code points`);
  });

  it('token offsets are JavaScript offsets of the same boundaries', () => {
    const text = 'Ça va? 记忆 x\u0301y 𝐀𝐁 ok';
    expect(unicode61Tokens(text)).toEqual([
      { start: 0, end: 2, text: 'ca' },
      { start: 3, end: 5, text: 'va' },
      { start: 7, end: 9, text: '记忆' },
      { start: 10, end: 13, text: 'xy' },
      { start: 14, end: 18, text: '𝐀𝐁' },
      { start: 19, end: 21, text: 'ok' },
    ]);
    expect(trigramTokens('AbÇd')).toEqual([
      { start: 0, end: 3, text: 'abç' },
      { start: 1, end: 4, text: 'bçd' },
    ]);
    expect(phraseTokens('Café-Übersicht', 'words')).toEqual(['cafe', 'ubersicht']);
  });
});
