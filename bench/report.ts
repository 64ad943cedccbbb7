/**
 * `npm run bench:report -- run.json [more.json …]`: writes bench/RESULTS.md from `npm run bench -- --json` runs,
 * so the dated figures the docs point to are the bench's own output, never copied by hand. One table per
 * section; a metric measured in several of the given runs is taken from the last file that has it, and each
 * section says which run (date, Node, CPU) its figures come from.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { BenchMetric, BenchResults } from './results.js';

const files = process.argv.slice(2).filter((a) => a !== '--');
if (files.length === 0) {
  console.error('usage: npm run bench:report -- <run.json> [more.json …]');
  process.exit(2);
}
const runs = files.map((file) => ({ file, run: JSON.parse(fs.readFileSync(file, 'utf8')) as BenchResults }));

/** Per section (the key up to its first '/'), each metric with the run it was taken from. */
const sections = new Map<string, Map<string, { metric: BenchMetric; run: BenchResults }>>();
for (const { run } of runs) {
  for (const metric of run.metrics) {
    const slash = metric.key.indexOf('/');
    const section = slash < 0 ? 'other' : metric.key.slice(0, slash);
    if (!sections.has(section)) sections.set(section, new Map());
    sections.get(section)!.set(metric.key, { metric, run });
  }
}

const show = (m: BenchMetric) =>
  m.unit === 'msg/s' ? `${Math.round(m.value)}` : m.value.toFixed(m.unit === 'ms' ? 2 : 1);
const describe = (r: BenchResults) =>
  `${r.startedAt.slice(0, 16).replace('T', ' ')} UTC, Node ${r.node}, ${r.cpus}, settings ${Object.entries(r.settings)
    .map(([k, v]) => `${k}=${v}`)
    .join(' ')}`;

const out: string[] = [
  '# Bench results',
  '',
  '<!-- Written by `npm run bench:report` from `npm run bench -- --json` output: do not edit by hand. -->',
  '',
  'What each section measures, and how to read it: [docs/performance.md](../docs/performance.md). Figures from',
  'one machine and one run each; compare runs made in one session (`npm run bench:compare`).',
];
for (const [section, metrics] of sections) {
  const from = [...new Set([...metrics.values()].map((m) => m.run))];
  out.push('', `## ${section}`, '', ...from.map((r) => `Run: ${describe(r)}.`), '');
  out.push('| case | value | unit | better | baseline |', '|---|---:|---|---|---|');
  for (const { metric } of metrics.values()) {
    const baseline = metric.baseline
      ? `${metric.baseline.label}: ${show({ ...metric, value: metric.baseline.value })}`
      : '';
    out.push(
      `| ${metric.key.slice(section.length + 1)} | ${show(metric)} | ${metric.unit} | ${metric.higherIsBetter ? 'higher' : 'lower'} | ${baseline} |`,
    );
  }
}
const target = path.join(path.dirname(fileURLToPath(import.meta.url)), 'RESULTS.md');
fs.writeFileSync(target, `${out.join('\n')}\n`);
console.log(`wrote ${target} from ${files.join(', ')}`);
