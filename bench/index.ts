/**
 * `npm run bench`: every benchmark, one table each. Figures, never assertions.
 *   --only search,import,append,reads,listing,coldstart,judge,postings   run only these sections (default: all)
 *   --json FILE                   also write every figure as JSON (bench/results.ts), for bench/compare.ts
 */
import fs from 'node:fs';
import os from 'node:os';
import { parseArgs } from 'node:util';
import { benchAppend } from './append.js';
import { benchColdStart } from './coldstart.js';
import { benchImport } from './import.js';
import { benchJudge } from './judge.js';
import { benchListing } from './listing.js';
import { benchPostings, postingsSource } from './postings.js';
import { benchPostingsSearch } from './postings-search.js';
import { benchReads } from './reads.js';
import type { BenchMetric, BenchResults } from './results.js';
import { benchSearch } from './search.js';

const SECTIONS = ['search', 'import', 'append', 'reads', 'listing', 'coldstart', 'judge', 'postings'] as const;
const { values: args } = parseArgs({
  args: process.argv.slice(2).filter((a) => a !== '--'),
  options: { json: { type: 'string' }, only: { type: 'string' } },
});
const only = args.only ? args.only.split(',').map((s) => s.trim()) : [...SECTIONS];
const unknown = only.filter((s) => !(SECTIONS as readonly string[]).includes(s));
if (unknown.length > 0) {
  console.error(`--only takes ${SECTIONS.join(', ')}; got ${unknown.join(', ')}`);
  process.exit(2);
}
const runs = (section: (typeof SECTIONS)[number]) => only.includes(section);
const cpus = `${os.cpus().length} × ${os.cpus()[0]?.model ?? 'cpu'}`;
const results: BenchResults = {
  startedAt: new Date().toISOString(),
  node: process.version,
  cpus,
  settings: {
    runs: Number(process.env.BENCH_RUNS ?? 5),
    messages: Number(process.env.BENCH_MESSAGES ?? 200_000),
    sections: only.join(','),
  },
  metrics: [],
};
const metric = (m: BenchMetric) => results.metrics.push(m);

const fmt = (n: number) => n.toFixed(2).padStart(8);
console.log(
  `hermes-sessiondb bench — ${results.startedAt.slice(0, 10)} — node ${process.version}, ${cpus}, ${Math.round(os.totalmem() / 2 ** 30)} GiB`,
);
if (runs('search')) {
  const { rows, notes, sizes } = await benchSearch();
  for (const n of notes) console.log(n);
  console.log(
    `\n| backend  | search case (limit 20)  | queries |  p50 ms |  p95 ms |  max ms | hits/query | top 20 = Hermes | longest stall ms |\n|----------|-------------------------|---------|---------|---------|---------|------------|-----------------|------------------|`,
  );
  for (const r of rows) {
    metric({ key: `search/${r.backend}: ${r.case} p50`, value: r.p50, unit: 'ms', higherIsBetter: false });
    metric({ key: `search/${r.backend}: ${r.case} p95`, value: r.p95, unit: 'ms', higherIsBetter: false });
    metric({
      key: `search/${r.backend}: ${r.case} longest stall`,
      value: r.stallMs,
      unit: 'ms',
      higherIsBetter: false,
    });
    if (r.oracle !== false && r.underCap > 0)
      metric({
        key: `search/${r.backend}: ${r.case} top 20 = Hermes`,
        value: (100 * r.sameTop20) / r.underCap,
        unit: '%',
        higherIsBetter: true,
      });
    const same = r.oracle === false ? 'no oracle' : r.underCap === 0 ? 'over cap' : `${r.sameTop20}/${r.underCap}`;
    console.log(
      `| ${r.backend.padEnd(8)} | ${r.case.padEnd(23)} | ${String(r.queries).padStart(7)} |${fmt(r.p50)} |${fmt(r.p95)} |${fmt(r.max)} | ${r.hits.toFixed(1).padStart(10)} | ${same.padStart(15)} | ${r.stallMs.toFixed(1).padStart(16)} |`,
    );
  }
  const fts5 = sizes[0];
  console.log(
    `\n| search structures          |      MiB | × FTS5 | parts (MiB) |\n|----------------------------|----------|--------|-------------|`,
  );
  for (const size of sizes) {
    const ratio = fts5 && fts5.bytes > 0 ? (size.bytes / fts5.bytes).toFixed(1) : '-';
    if (size !== fts5)
      metric({
        key: `search/${size.backend}: search structures`,
        value: size.bytes / 2 ** 20,
        unit: 'MiB',
        higherIsBetter: false,
        ...(fts5 ? { baseline: { label: fts5.backend, value: fts5.bytes / 2 ** 20 } } : {}),
      });
    console.log(
      `| ${size.backend.padEnd(26)} | ${(size.bytes / 2 ** 20).toFixed(1).padStart(8)} | ${ratio.padStart(6)} | ${size.parts} |`,
    );
  }
}

if (runs('import')) {
  const imported = await benchImport(
    Number(process.env.BENCH_MESSAGES ?? 200_000),
    process.env.DATABASE_URL ?? 'postgres://root@127.0.0.1:5432/test',
  );
  for (const n of imported.notes) console.log(n);
  console.log(
    `\n| transfer                    | messages | seconds |   msg/s |\n|-----------------------------|----------|---------|---------|`,
  );
  for (const r of imported.rows) {
    metric({ key: `import/${r.target} seconds`, value: r.seconds, unit: 's', higherIsBetter: false });
    console.log(
      `| ${r.target.padEnd(27)} | ${String(r.messages).padStart(8)} | ${r.seconds.toFixed(1).padStart(7)} | ${Math.round(r.rate).toString().padStart(7)} |`,
    );
  }
  if (imported.exported) {
    const e = imported.exported;
    metric({ key: 'export/streamed seconds', value: e.seconds, unit: 's', higherIsBetter: false });
    metric({ key: 'export/streamed peak RSS', value: e.peakRssMiB, unit: 'MiB', higherIsBetter: false });
    console.log(
      `\n| export (CLI, SQLite → JSON lines, own process) | messages | seconds | peak RSS MiB | longest stall ms |\n|-----------------------------------------------|----------|---------|--------------|------------------|`,
    );
    console.log(
      `| ${'streamed a page at a time'.padEnd(45)} | ${String(e.messages).padStart(8)} | ${e.seconds.toFixed(1).padStart(7)} | ${e.peakRssMiB.toFixed(0).padStart(12)} | ${e.stallMs.toFixed(1).padStart(16)} |`,
    );
  }
}

for (const section of ['append', 'reads'] as const) {
  if (!runs(section)) continue;
  const bench = section === 'append' ? benchAppend : benchReads;
  const appended = await bench(process.env.DATABASE_URL ?? 'postgres://root@127.0.0.1:5432/test');
  for (const n of appended.notes) console.log(n);
  console.log(
    `\nmedians of ${process.env.BENCH_RUNS ?? 5} runs; ratio = figure / baseline (for ms, baseline / figure: above 1 is faster)`,
  );
  console.log(
    `\n| case                                                        |     figure | baseline                    |   baseline |  ratio |\n|-------------------------------------------------------------|------------|-----------------------------|------------|--------|`,
  );
  for (const r of appended.rows) {
    metric({
      key: `${section}/${r.case}`,
      value: r.value,
      unit: r.unit,
      higherIsBetter: r.unit === 'msg/s',
      ...(r.baseline ? { baseline: r.baseline } : {}),
    });
    const fig = r.unit === 'ms' ? `${r.value.toFixed(3)} ms` : `${Math.round(r.value)} msg/s`;
    const base = r.baseline
      ? r.unit === 'ms'
        ? `${r.baseline.value.toFixed(3)} ms`
        : `${Math.round(r.baseline.value)} msg/s`
      : '';
    const ratio = r.baseline
      ? (r.unit === 'ms' ? r.baseline.value / r.value : r.value / r.baseline.value).toFixed(2)
      : '';
    console.log(
      `| ${r.case.padEnd(59)} | ${fig.padStart(10)} | ${(r.baseline?.label ?? '').padEnd(27)} | ${base.padStart(10)} | ${ratio.padStart(6)} |`,
    );
  }
}

if (runs('listing')) {
  const listed = await benchListing(process.env.DATABASE_URL ?? 'postgres://root@127.0.0.1:5432/test');
  for (const n of listed.notes) console.log(n);
  console.log(
    `\n| listing (ms per call, median of ${process.env.BENCH_RUNS ?? 5})                          |       ms | baseline                |       ms |  ratio |\n|-------------------------------------------------------------|----------|-------------------------|----------|--------|`,
  );
  for (const r of listed.rows) {
    metric({
      key: `listing/${r.case}`,
      value: r.value,
      unit: 'ms',
      higherIsBetter: false,
      ...(r.baseline ? { baseline: r.baseline } : {}),
    });
    const base = r.baseline ? r.baseline.value.toFixed(3) : '';
    const ratio = r.baseline ? (r.baseline.value / r.value).toFixed(2) : '';
    console.log(
      `| ${r.case.padEnd(59)} | ${r.value.toFixed(3).padStart(8)} | ${(r.baseline?.label ?? '').padEnd(23)} | ${base.padStart(8)} | ${ratio.padStart(6)} |`,
    );
  }
}

if (runs('coldstart')) {
  const cold = await benchColdStart();
  for (const n of cold.notes) console.log(n);
  console.log(
    `\n| cold start (fresh node process)                 | wall ms |  cpu ms | baseline                                     | baseline ms | over baseline ms |\n|-------------------------------------------------|---------|---------|----------------------------------------------|-------------|------------------|`,
  );
  for (const r of cold.rows) {
    metric({
      key: `coldstart/${r.case}`,
      value: r.wallMs,
      unit: 'ms',
      higherIsBetter: false,
      ...(r.baseline ? { baseline: { label: r.baseline.label, value: r.baseline.wallMs } } : {}),
    });
    metric({ key: `coldstart/${r.case} cpu`, value: r.cpuMs, unit: 'ms', higherIsBetter: false });
    const over = r.baseline ? (r.wallMs - r.baseline.wallMs).toFixed(0) : '';
    console.log(
      `| ${r.case.padEnd(47)} | ${r.wallMs.toFixed(0).padStart(7)} | ${r.cpuMs.toFixed(0).padStart(7)} | ${(r.baseline?.label ?? '').padEnd(44)} | ${(r.baseline?.wallMs.toFixed(0) ?? '').padStart(11)} | ${over.padStart(16)} |`,
    );
  }
}

if (runs('judge')) {
  console.log(
    `\n| judge one 1 MB row (cap-length query) | whole ms | in steps ms | longest step ms | steps |\n|---------------------------------------|----------|-------------|-----------------|-------|`,
  );
  for (const r of benchJudge()) {
    metric({ key: `judge/${r.case} whole`, value: r.wholeMs, unit: 'ms', higherIsBetter: false });
    metric({ key: `judge/${r.case} in steps`, value: r.stepsMs, unit: 'ms', higherIsBetter: false });
    metric({ key: `judge/${r.case} longest step`, value: r.longestStepMs, unit: 'ms', higherIsBetter: false });
    console.log(
      `| ${r.case.padEnd(37)} | ${r.wholeMs.toFixed(1).padStart(8)} | ${r.stepsMs.toFixed(1).padStart(11)} | ${r.longestStepMs.toFixed(1).padStart(15)} | ${String(r.steps).padStart(5)} |`,
    );
  }
}

if (runs('postings')) {
  const { rows, notes } = benchPostings();
  for (const n of notes) console.log(n);
  console.log(
    `\n| postings (our tokenizer) | messages | µs/message | terms | postings | occurrences | encoded MiB | as 4 KB rows MiB | FTS5 MiB | terms ≠ FTS5 |\n|--------------------------|----------|------------|-------|----------|-------------|-------------|------------------|----------|--------------|`,
  );
  for (const r of rows) {
    const perMessage = (1000 * r.tokenizeMs) / r.messages;
    metric({
      key: `postings/${r.index}: tokenize per message`,
      value: perMessage / 1000,
      unit: 'ms',
      higherIsBetter: false,
    });
    metric({
      key: `postings/${r.index}: as 4 KB rows`,
      value: r.asRowsMiB,
      unit: 'MiB',
      higherIsBetter: false,
      baseline: { label: 'FTS5', value: r.fts5MiB },
    });
    console.log(
      `| ${r.index.padEnd(24)} | ${String(r.messages).padStart(8)} | ${perMessage.toFixed(1).padStart(10)} | ${String(r.terms).padStart(5)} | ${String(r.postings).padStart(8)} | ${String(r.occurrences).padStart(11)} | ${r.encodedMiB.toFixed(1).padStart(11)} | ${r.asRowsMiB.toFixed(1).padStart(16)} | ${r.fts5MiB.toFixed(1).padStart(8)} | ${String(r.differentFromFts5).padStart(12)} |`,
    );
  }
  const onServers = await benchPostingsSearch(postingsSource(), {
    postgres: process.env.DATABASE_URL ?? 'postgres://root@127.0.0.1:5432/test',
    mysql: process.env.MYSQL_URL ?? 'mysql://root@127.0.0.1:3306/test',
  });
  for (const n of onServers.notes) console.log(n);
  console.log(
    `\n| postings as blocks (shared ranking) | queries |  p50 ms |  p95 ms | top 20 = Hermes |\n|-------------------------------------|---------|---------|---------|-----------------|`,
  );
  for (const r of onServers.rows) {
    const label = `${r.engine}: ${r.case}`;
    metric({ key: `postings/blocks on ${label} p95`, value: r.p95, unit: 'ms', higherIsBetter: false });
    const same = `${r.sameTop20}/${r.compared}`;
    console.log(
      `| ${label.padEnd(35)} | ${String(r.queries).padStart(7)} |${fmt(r.p50)} |${fmt(r.p95)} | ${same.padStart(15)} |`,
    );
  }
}

if (args.json) {
  fs.writeFileSync(args.json, `${JSON.stringify(results, null, 2)}\n`);
  console.log(
    `\nwrote ${results.metrics.length} figures to ${args.json} (compare two runs: npm run bench:compare -- a.json b.json)`,
  );
}
