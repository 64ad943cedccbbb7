/**
 * `npx tsx scripts/gen-unicode61.ts`: regenerate src/search/unicode61-table.ts by asking SQLite's own FTS5
 * (better-sqlite3's build) how its tokenizers treat every code point 0..0x10FFFF (surrogates skipped).
 *
 * For each code point c, three probe rows:
 *  - unicode61 "<c>":    its token count (the docsize shadow table, which counts empty tokens too) says
 *                        whether c is a token character (it can start a token: categories L*, N*, Co);
 *  - unicode61 "q<c>q":  one token means c continues a token (token characters, plus the diacritics FTS5
 *                        accepts inside a token); the token's text "q" + fold + "q" gives c's folding with
 *                        remove_diacritics=1 (possibly nothing);
 *  - trigram   "<c>qqq": the first trigram is fold(c) + "qq" (case folding without diacritic removal);
 *                        a single trigram "qqq" means c folds to nothing and is skipped.
 * The table is written as ranges: token characters, continue-only characters, and folding runs.
 */
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';

const MAX = 0x10ffff;
const CHUNK = 0x8000;
const isSurrogate = (cp: number) => cp >= 0xd800 && cp <= 0xdfff;

/** 0: separator, 1: token character, 2: continues a token only. */
const kind = new Uint8Array(MAX + 1);
/** unicode61 folding (remove_diacritics=1) of token/continue characters; -1 = not a token character. */
const fold61 = new Int32Array(MAX + 1).fill(-1);
/** trigram folding (case only); 0 = skipped. */
const foldTri = new Int32Array(MAX + 1);

function single(s: string): number {
  const cps = [...s].map((ch) => ch.codePointAt(0)!);
  if (cps.length !== 1) throw new Error(`expected one code point, got ${JSON.stringify(s)}`);
  return cps[0]!;
}

for (let base = 0; base <= MAX; base += CHUNK) {
  const db = new Database(':memory:');
  db.exec(`CREATE VIRTUAL TABLE u USING fts5(content);
    CREATE VIRTUAL TABLE uv USING fts5vocab(u, instance);
    CREATE VIRTUAL TABLE tg USING fts5(content, tokenize='trigram');
    CREATE VIRTUAL TABLE tgv USING fts5vocab(tg, instance);`);
  const insU = db.prepare('INSERT INTO u(rowid, content) VALUES (?, ?)');
  const insT = db.prepare('INSERT INTO tg(rowid, content) VALUES (?, ?)');
  const end = Math.min(MAX, base + CHUNK - 1);
  db.transaction(() => {
    for (let cp = base; cp <= end; cp++) {
      if (isSurrogate(cp)) continue;
      const ch = String.fromCodePoint(cp);
      insU.run(cp * 2, ch);
      insU.run(cp * 2 + 1, `q${ch}q`);
      insT.run(cp, `${ch}qqq`);
    }
  })();
  for (const row of db.prepare('SELECT id, sz FROM u_docsize').iterate() as Iterable<{ id: number; sz: Buffer }>) {
    if (row.sz.length !== 1) throw new Error(`unexpected docsize ${row.sz.toString('hex')} for row ${row.id}`);
    const n = row.sz[0]!;
    const cp = Math.floor(row.id / 2);
    if (row.id % 2 === 0) {
      if (n > 1) throw new Error(`"${cp}" alone gives ${n} tokens`);
      if (n === 1) kind[cp] = 1;
    } else if (n === 1) {
      if (kind[cp] === 0) kind[cp] = 2;
    } else if (n !== 2) throw new Error(`q${cp}q gives ${n} tokens`);
  }
  for (const row of db
    .prepare('SELECT term, doc FROM uv WHERE doc % 2 = 1 ORDER BY doc, offset')
    .iterate() as Iterable<{ term: string; doc: number }>) {
    const cp = (row.doc - 1) / 2;
    if (kind[cp] === 0) continue;
    if (!row.term.startsWith('q') || !row.term.endsWith('q') || row.term.length < 2)
      throw new Error(`odd term ${row.term}`);
    const mid = row.term.slice(1, -1);
    fold61[cp] = mid === '' ? 0 : single(mid);
  }
  const triTerms = new Map<number, string[]>();
  for (const row of db.prepare('SELECT term, doc FROM tgv ORDER BY doc, offset').iterate() as Iterable<{
    term: string;
    doc: number;
  }>) {
    const list = triTerms.get(row.doc) ?? [];
    list.push(row.term);
    triTerms.set(row.doc, list);
  }
  for (let cp = base; cp <= end; cp++) {
    if (isSurrogate(cp)) continue;
    const terms = triTerms.get(cp) ?? [];
    if (terms.length === 1 && terms[0] === 'qqq') foldTri[cp] = 0;
    else if (terms.length === 2 && terms[1] === 'qqq' && terms[0]!.endsWith('qq'))
      foldTri[cp] = single(terms[0]!.slice(0, -2));
    else throw new Error(`trigram probe of ${cp}: ${JSON.stringify(terms)}`);
  }
  db.close();
  process.stderr.write(`\r${(end + 1).toString(16)}`);
}
process.stderr.write('\n');

for (let cp = 0; cp <= MAX; cp++) {
  if (kind[cp] !== 0 && fold61[cp] === -1) throw new Error(`no fold for token char ${cp}`);
}

// --- encode ---------------------------------------------------------------------------------------------

/** Ranges of one kind as delta-encoded [gapFromPreviousEnd, length] pairs. */
function ranges(pred: (cp: number) => boolean): number[] {
  const out: number[] = [];
  let prevEnd = 0;
  for (let cp = 0; cp <= MAX; cp++) {
    if (!pred(cp)) continue;
    let e = cp;
    while (e + 1 <= MAX && pred(e + 1)) e++;
    out.push(cp - prevEnd, e - cp + 1);
    prevEnd = e + 1;
    cp = e;
  }
  return out;
}

/**
 * Folding runs as [gapFromPreviousRunEnd, count, stride, mode, value] (mode 0: target = cp + value; mode 1:
 * target = value) covering every code point whose folding differs from itself. Code points inside a
 * stride-2 run that are skipped fold to themselves.
 */
function foldRuns(fold: (cp: number) => number): number[] {
  const changed: number[] = [];
  for (let cp = 0; cp <= MAX; cp++) if (!isSurrogate(cp) && fold(cp) !== cp) changed.push(cp);
  const out: number[] = [];
  let prevEnd = 0;
  let i = 0;
  while (i < changed.length) {
    const start = changed[i]!;
    const target = fold(start);
    // Candidate runs: constant delta / constant target, stride 1 or 2; keep the longest.
    let best = { count: 1, stride: 1, mode: 1, value: target };
    for (const stride of [1, 2]) {
      for (const mode of [0, 1]) {
        const value = mode === 0 ? target - start : target;
        if (mode === 0 && target === 0) continue;
        let count = 1;
        for (;;) {
          const next = start + count * stride;
          if (next > MAX || fold(next) !== (mode === 0 ? next + value : value)) break;
          // Skipped code points of a stride-2 run must fold to themselves.
          if (stride === 2 && fold(next - 1) !== next - 1) break;
          count++;
        }
        if (count > best.count) best = { count, stride, mode, value };
      }
    }
    out.push(start - prevEnd, best.count, best.stride, best.mode, best.value);
    const last = start + (best.count - 1) * best.stride;
    prevEnd = last + 1;
    while (i < changed.length && changed[i]! <= last) i++;
  }
  return out;
}

const tokenRanges = ranges((cp) => kind[cp] === 1);
const continueRanges = ranges((cp) => kind[cp] === 2);
const fold61Runs = foldRuns((cp) => (kind[cp] === 0 ? cp : fold61[cp]!));
const foldTriRuns = foldRuns((cp) => (isSurrogate(cp) ? cp : foldTri[cp]!));

const version = (() => {
  const db = new Database(':memory:');
  const v = db.prepare('SELECT sqlite_version()').pluck().get() as string;
  db.close();
  return v;
})();

const num = (a: number[]) => a.map((n) => n.toString(36)).join(',');
const body = `/**
 * GENERATED by \`npx tsx scripts/gen-unicode61.ts\` from SQLite ${version} (better-sqlite3's FTS5): do not edit.
 *
 * How FTS5's unicode61 tokenizer (default options: remove_diacritics=1, categories "L* N* Co") and trigram
 * tokenizer (case_sensitive=0, remove_diacritics=0) treat each code point. Numbers are base-36.
 *  - TOKEN_RANGES, CONTINUE_RANGES: [gap from the previous range's end, length] pairs of token characters
 *    (they start or continue a token) and of characters that only continue a token (diacritics);
 *  - FOLD61_RUNS (unicode61 folding of token characters) and FOLD_TRIGRAM_RUNS (trigram folding of any
 *    character): [gap from the previous run's end, count, stride, mode, value] where mode 0 folds cp to
 *    cp + value and mode 1 to value (0: the character folds to nothing).
 */
export const TOKEN_RANGES = '${num(tokenRanges)}';
export const CONTINUE_RANGES = '${num(continueRanges)}';
export const FOLD61_RUNS = '${num(fold61Runs)}';
export const FOLD_TRIGRAM_RUNS = '${num(foldTriRuns)}';
`;
const target = path.join(import.meta.dirname, '..', 'src', 'search', 'unicode61-table.ts');
fs.writeFileSync(target, body);
console.log(
  `wrote ${target}: ${body.length} bytes; token ranges ${tokenRanges.length / 2}, continue ranges ${continueRanges.length / 2}, ` +
    `unicode61 fold runs ${fold61Runs.length / 5}, trigram fold runs ${foldTriRuns.length / 5}`,
);
