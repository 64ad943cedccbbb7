/**
 * Judging a megabyte row in steps: MySQL/MariaDB's search judges candidate rows by FTS5's rules in TypeScript
 * (rowEvaluatorSteps), and lets the event loop run between steps. For the longest query of each path the
 * 2,048-character cap allows, against one 1 MB pasted log: the time to judge the row in one go, in steps,
 * and the longest step (what holds the event loop). Medians of BENCH_RUNS runs.
 */
import { MAX_QUERY_CHARS } from '../src/repos/search.js';
import { rowEvaluator, rowEvaluatorSteps } from '../src/search/fts5-match.js';
import { type QueryMode, parseQuery } from '../src/search/query.js';
import { pastedLog } from './search.js';

export interface JudgeRow {
  case: string;
  /** rowEvaluator: the whole row at once. */
  wholeMs: number;
  /** rowEvaluatorSteps driven to the end. */
  stepsMs: number;
  longestStepMs: number;
  steps: number;
}

/** Terms joined by `sep` after `head`, as many as fit in the cap. */
function atCap(term: (i: number) => string, sep: string, head = ''): string {
  let query = head;
  for (let i = 0; ; i++) {
    const next = query === '' ? term(i) : `${query}${sep}${term(i)}`;
    if ([...next].length > MAX_QUERY_CHARS) return query;
    query = next;
  }
}

const WORDS = ['timeout', 'request', 'served', 'cache', 'shard', 'upstream', 'docker', 'server', 'error', 'deploy'];

/**
 * The longest query of each search path the cap allows (also the queries of
 * test/reliability/search-event-loop.test.ts): one short CJK character then short Latin tokens (a LIKE scan
 * per token), ORs of numbers, of quoted word pairs, of prefixes, and of numbers after a CJK word (trigram).
 */
export const CAP_QUERIES = {
  shortCjk: atCap((i) => `zq${i}x`, ' ', '的'),
  words: atCap((i) => String(i), ' OR '),
  phrases: atCap((i) => `"${WORDS[i % WORDS.length]} ${WORDS[(i + 1) % WORDS.length]}"`, ' OR '),
  prefixes: atCap((i) => (i % 50 === 0 ? 'requ*' : `${100 + i}*`), ' OR '),
  trigram: atCap((i) => String(200 + i), ' OR ', '数据库'),
};

const CASES: Array<[string, string, QueryMode]> = [
  ['OR of numbers (words)', CAP_QUERIES.words, 'words'],
  ['OR of phrases', CAP_QUERIES.phrases, 'words'],
  ['OR of prefixes', CAP_QUERIES.prefixes, 'words'],
  ['OR of substrings (trigram)', CAP_QUERIES.trigram, 'substrings'],
];

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

export function benchJudge(runs = Number(process.env.BENCH_RUNS ?? 5)): JudgeRow[] {
  const text = pastedLog(3);
  return CASES.map(([name, query, mode]) => {
    const parsed = parseQuery(query, mode);
    if (!parsed.ok) throw new Error(`bench query did not parse: ${name}`);
    const whole = rowEvaluator(parsed.root, mode);
    const stepwise = rowEvaluatorSteps(parsed.root, mode);
    const wholeMs: number[] = [];
    const stepsMs: number[] = [];
    const longest: number[] = [];
    let steps = 0;
    for (let r = 0; r < runs; r++) {
      let t = performance.now();
      whole(text);
      wholeMs.push(performance.now() - t);
      const started = performance.now();
      const it = stepwise(text);
      let max = 0;
      steps = 0;
      t = performance.now();
      for (let s = it.next(); ; s = it.next()) {
        const now = performance.now();
        max = Math.max(max, now - t);
        t = now;
        steps++;
        if (s.done) break;
      }
      stepsMs.push(performance.now() - started);
      longest.push(max);
    }
    return { case: name, wholeMs: median(wholeMs), stepsMs: median(stepsMs), longestStepMs: median(longest), steps };
  });
}
