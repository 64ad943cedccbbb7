/**
 * The cost of huge rows for the TypeScript snippet(): a 1 MB row with thousands of matches, and one where a
 * phrase of the query never occurs. Timed, so it runs alone (test/suites.ts TIMED); what the snippets are
 * is compared with SQLite's own in fts5-snippet.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { fts5Snippet, fts5SnippetFull } from '../../src/search/fts5-snippet.js';
import { parseQuery } from '../../src/search/query.js';
import { rng } from '../helpers/corpus.js';
import { COMMON } from '../helpers/words.js';

describe('huge rows', () => {
  const big = (() => {
    const q = rng(5);
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(q() * xs.length)]!;
    const parts: string[] = [];
    let length = 0;
    let n = 0;
    while (length < 1_000_000) {
      const needle = q() < 0.02;
      const part = needle ? 'needle ' : `${pick(COMMON)}${q() < 0.08 ? '. ' : ' '}`;
      if (needle) n++;
      parts.push(part);
      length += part.length;
    }
    return { text: parts.join(''), needles: n };
  })();

  it('1 MB with thousands of matches: a few ms, the snippet around the first match', () => {
    expect(big.needles).toBeGreaterThan(2000);
    const root = parseQuery('needle', 'words');
    if (!root.ok) throw new Error();
    fts5Snippet(big.text, root.root); // warm up
    const times: number[] = [];
    let snippet = '';
    for (let i = 0; i < 5; i++) {
      const t0 = performance.now();
      snippet = fts5Snippet(big.text, root.root);
      times.push(performance.now() - t0);
    }
    const best = Math.min(...times);
    console.log(`1 MB row, ${big.needles} matches: fts5Snippet ${times.map((t) => t.toFixed(2)).join(' / ')} ms`);
    expect(best).toBeLessThan(50);
    // The windowed promise: the exact algorithm on a region starting before the first match; here the
    // region begins at the text's start, so the snippet is the full algorithm's on the text's first part.
    const first = big.text.indexOf('needle');
    const head = big.text.slice(0, first + 4000);
    const onHead = fts5SnippetFull(head, root.root);
    expect(snippet.slice(0, 60)).toBe(onHead.slice(0, 60));
    expect(snippet).toContain('>>>needle<<<');
  });

  it('1 MB where a phrase never occurs: the presence scan stops SNIPPET_SCAN_CHARS past the first match', () => {
    for (const [query, mode] of [
      ['needle OR absentword', 'words'],
      ['"needle" OR "zzzqqq"', 'substrings'],
    ] as const) {
      const root = parseQuery(query, mode);
      if (!root.ok) throw new Error();
      // The best of five warm runs: the work the scan does, not the compiler's first pass over it.
      fts5Snippet(big.text, root.root, { mode });
      const times: number[] = [];
      let snippet = '';
      for (let i = 0; i < 5; i++) {
        const t0 = performance.now();
        snippet = fts5Snippet(big.text, root.root, { mode });
        times.push(performance.now() - t0);
      }
      const ms = Math.min(...times);
      console.log(`1 MB row, ${query} (${mode}): ${times.map((t) => t.toFixed(2)).join(' / ')} ms`);
      expect(snippet).toContain('>>>needle<<<');
      expect(ms).toBeLessThan(50);
    }
  });
});
