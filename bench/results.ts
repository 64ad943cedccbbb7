/**
 * The bench's machine-readable results (`npm run bench -- --json out.json`): one metric per line of every table,
 * keyed so that two runs can be compared (`npm run bench:compare -- before.json after.json`).
 */
export interface BenchMetric {
  /** Stable identity across runs: section, then the row's case, e.g. `append/sqlite FULL: appendMessage …`. */
  key: string;
  value: number;
  /** `%`: a share of queries (the search's top 20 equal to Hermes'). */
  unit: 'ms' | 'msg/s' | 's' | 'MiB' | '%';
  /** Whether a larger value is better (rates) or worse (times, memory). */
  higherIsBetter: boolean;
  /** The raw driver (or Hermes) measured in the same run, when the row has one. */
  baseline?: { label: string; value: number };
}

export interface BenchResults {
  /** ISO time the run started. */
  startedAt: string;
  node: string;
  cpus: string;
  /** BENCH_RUNS, BENCH_MESSAGES and the sections run. */
  settings: Record<string, string | number>;
  metrics: BenchMetric[];
}
