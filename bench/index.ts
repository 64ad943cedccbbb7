/** `npm run bench`: every benchmark, one table. Figures, never assertions. */
import os from 'node:os';
import { benchAppend } from './append.js';
import { benchImport } from './import.js';
import { benchSearch } from './search.js';

const fmt = (n: number) => n.toFixed(2).padStart(8);
console.log(
  `hermes-sessiondb bench — ${new Date().toISOString().slice(0, 10)} — node ${process.version}, ${os.cpus().length} × ${os.cpus()[0]?.model ?? 'cpu'}, ${Math.round(os.totalmem() / 2 ** 30)} GiB`,
);
const { rows, notes } = await benchSearch();
for (const n of notes) console.log(n);
console.log(
  `\n| backend  | search case (limit 20)  | queries |  p50 ms |  p95 ms |  max ms | hits/query | top 20 = Hermes | longest stall ms |\n|----------|-------------------------|---------|---------|---------|---------|------------|-----------------|------------------|`,
);
for (const r of rows) {
  const same = r.underCap === 0 ? 'over cap' : `${r.sameTop20}/${r.underCap}`;
  console.log(
    `| ${r.backend.padEnd(8)} | ${r.case.padEnd(23)} | ${String(r.queries).padStart(7)} |${fmt(r.p50)} |${fmt(r.p95)} |${fmt(r.max)} | ${r.hits.toFixed(1).padStart(10)} | ${same.padStart(15)} | ${r.stallMs.toFixed(1).padStart(16)} |`,
  );
}

const imported = await benchImport(
  Number(process.env.BENCH_MESSAGES ?? 200_000),
  process.env.DATABASE_URL ?? 'postgres://root@127.0.0.1:5432/test',
);
for (const n of imported.notes) console.log(n);
console.log(
  `\n| transfer                    | messages | seconds |   msg/s |\n|-----------------------------|----------|---------|---------|`,
);
for (const r of imported.rows)
  console.log(
    `| ${r.target.padEnd(27)} | ${String(r.messages).padStart(8)} | ${r.seconds.toFixed(1).padStart(7)} | ${Math.round(r.rate).toString().padStart(7)} |`,
  );
if (imported.exported) {
  const e = imported.exported;
  console.log(
    `\n| export (CLI, SQLite → JSON lines, own process) | messages | seconds | peak RSS MiB | longest stall ms |\n|-----------------------------------------------|----------|---------|--------------|------------------|`,
  );
  console.log(
    `| ${'streamed a page at a time'.padEnd(45)} | ${String(e.messages).padStart(8)} | ${e.seconds.toFixed(1).padStart(7)} | ${e.peakRssMiB.toFixed(0).padStart(12)} | ${e.stallMs.toFixed(1).padStart(16)} |`,
  );
}

const appended = await benchAppend(process.env.DATABASE_URL ?? 'postgres://root@127.0.0.1:5432/test');
for (const n of appended.notes) console.log(n);
console.log(
  `\nmedians of ${process.env.BENCH_RUNS ?? 5} runs; ratio = figure / baseline (for ms, baseline / figure: above 1 is faster)`,
);
console.log(
  `\n| case                                                        |     figure | baseline                    |   baseline |  ratio |\n|-------------------------------------------------------------|------------|-----------------------------|------------|--------|`,
);
for (const r of appended.rows) {
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
