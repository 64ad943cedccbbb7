/**
 * `npm run bench:compare -- before.json after.json`: the metrics two `npm run bench -- --json` runs share, side by
 * side, with the change expressed so that above 1.00 is always better (rates: after / before; times and memory:
 * before / after). Metrics only one run has are listed at the end. Figures, never a verdict: this VM's speed drifts
 * between days, so compare runs made in one session.
 */
import fs from 'node:fs';
import type { BenchMetric, BenchResults } from './results.js';

const [beforeFile, afterFile] = process.argv.slice(2).filter((a) => a !== '--');
if (!beforeFile || !afterFile) {
  console.error('usage: npm run bench:compare -- <before.json> <after.json>');
  process.exit(2);
}
const read = (file: string): BenchResults => JSON.parse(fs.readFileSync(file, 'utf8')) as BenchResults;
const before = read(beforeFile);
const after = read(afterFile);

const byKey = (r: BenchResults) => new Map(r.metrics.map((m) => [m.key, m] as const));
const a = byKey(before);
const b = byKey(after);
const show = (m: BenchMetric) =>
  m.unit === 'msg/s' ? `${Math.round(m.value)} msg/s` : `${m.value.toFixed(m.unit === 'ms' ? 3 : 1)} ${m.unit}`;
/** Above 1 is better, whatever the unit. */
export const improvement = (from: BenchMetric, to: BenchMetric): number =>
  from.higherIsBetter ? to.value / from.value : from.value / to.value;

console.log(`before: ${beforeFile} (${before.startedAt}, ${before.node})`);
console.log(`after:  ${afterFile} (${after.startedAt}, ${after.node})\n`);
console.log(
  `| metric${' '.repeat(66)} |          before |           after | better× |\n|${'-'.repeat(74)}|-----------------|-----------------|---------|`,
);
for (const [key, from] of a) {
  const to = b.get(key);
  if (!to) continue;
  console.log(
    `| ${key.slice(0, 72).padEnd(72)} | ${show(from).padStart(15)} | ${show(to).padStart(15)} | ${improvement(from, to).toFixed(2).padStart(7)} |`,
  );
}
const onlyBefore = [...a.keys()].filter((k) => !b.has(k));
const onlyAfter = [...b.keys()].filter((k) => !a.has(k));
if (onlyBefore.length > 0) console.log(`\nonly in before: ${onlyBefore.join('; ')}`);
if (onlyAfter.length > 0) console.log(`only in after: ${onlyAfter.join('; ')}`);
