/**
 * Cold start: how long a fresh `node` process takes to import the built package (dist/), open a store and close
 * it, next to the floor (an empty `node`, and better-sqlite3 loaded and opened by hand) measured in the same run.
 * Each case runs in BENCH_COLDSTART_RUNS fresh processes (default 11); the figures are medians of the wall time
 * seen from here (spawn to exit) and of the CPU time the child used (user + system, every thread), which a busy
 * machine disturbs less than the wall time.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

export interface ColdStartRow {
  case: string;
  wallMs: number;
  cpuMs: number;
  /** The floor this case is compared with, measured in the same run. */
  baseline?: { label: string; wallMs: number };
}

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const DIST_ENTRY = path.join(ROOT, 'dist/index.js');
const CLI = path.join(ROOT, 'dist/cli/main.js');

/** The newest modification time under `dir` of files ending in `ext`. */
function newestMtime(dir: string, ext: string): number {
  let newest = 0;
  for (const entry of fs.readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile() || !entry.name.endsWith(ext)) continue;
    newest = Math.max(newest, fs.statSync(path.join(entry.parentPath, entry.name)).mtimeMs);
  }
  return newest;
}

/** Build dist/ when it is missing or older than src/: the bench measures what a user would load. */
function ensureBuilt(notes: string[]): void {
  const built = fs.existsSync(DIST_ENTRY) ? fs.statSync(DIST_ENTRY).mtimeMs : 0;
  if (built >= newestMtime(path.join(ROOT, 'src'), '.ts')) return;
  notes.push('coldstart: dist/ was missing or older than src/, built it (npm run build)');
  const build = spawnSync('npm', ['run', 'build'], { cwd: ROOT, stdio: 'pipe', encoding: 'utf8' });
  if (build.status !== 0) throw new Error(`npm run build failed:\n${build.stdout}\n${build.stderr}`);
}

/** Printed by every child as its last line: the CPU it used, whatever it ran before. */
const REPORT_CPU = `{const u=process.cpuUsage();process.stdout.write('\\ncpu '+((u.user+u.system)/1000)+'\\n')}`;

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

interface Case {
  name: string;
  args: string[];
  /** The name of the case this one is compared with. */
  baseline?: string;
}

/**
 * Run every case `runs` times, each run in a fresh process, one case after the other within a round so that a
 * machine getting busier or quieter moves every case alike; medians of wall and CPU time.
 */
function measure(runs: number, cases: Case[]): ColdStartRow[] {
  const walls = cases.map((): number[] => []);
  const cpus = cases.map((): number[] => []);
  for (let round = 0; round < runs; round++) {
    cases.forEach((c, i) => {
      const start = process.hrtime.bigint();
      const child = spawnSync(process.execPath, c.args, { cwd: ROOT, encoding: 'utf8' });
      const wall = Number(process.hrtime.bigint() - start) / 1e6;
      if (child.status !== 0) throw new Error(`${c.name} failed (${child.status}):\n${child.stderr}`);
      const cpu = /\ncpu ([\d.]+)\n?$/.exec(child.stdout);
      walls[i]!.push(wall);
      cpus[i]!.push(cpu ? Number(cpu[1]) : Number.NaN);
    });
  }
  const rows = cases.map((c, i) => ({ case: c.name, wallMs: median(walls[i]!), cpuMs: median(cpus[i]!) }));
  return rows.map((row, i) => {
    const base = rows.find((r) => r.case === cases[i]!.baseline);
    return base ? { ...row, baseline: { label: base.case, wallMs: base.wallMs } } : row;
  });
}

/** An ES module script for `node --input-type=module -e`, reporting its CPU at the end. */
const esm = (body: string) => ['--input-type=module', '-e', `${body}\n${REPORT_CPU}`];

export async function benchColdStart(): Promise<{ rows: ColdStartRow[]; notes: string[] }> {
  const notes: string[] = [];
  ensureBuilt(notes);
  const runs = Number(process.env.BENCH_COLDSTART_RUNS ?? 11);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hsdb-coldstart-'));
  try {
    const file = path.join(dir, 'store.db');
    const entry = JSON.stringify(pathToFileURL(DIST_ENTRY).href);
    const url = JSON.stringify(`sqlite:${file}`);
    // The file store exists and is migrated before the runs: each run opens a store as an app does every start.
    const create = spawnSync(
      process.execPath,
      esm(`const { openStore } = await import(${entry}); await (await openStore(${url})).close();`),
      { encoding: 'utf8' },
    );
    if (create.status !== 0) throw new Error(`creating the store failed:\n${create.stderr}`);

    const FLOOR = 'node -e ""';
    const RAW_FILE = 'better-sqlite3: import, open file, close';
    const RAW_MEMORY = 'better-sqlite3: import, open :memory:, close';
    const rows = measure(runs, [
      { name: FLOOR, args: ['-e', REPORT_CPU] },
      {
        name: RAW_FILE,
        args: esm(
          `const { default: Database } = await import('better-sqlite3'); new Database(${JSON.stringify(file)}).close();`,
        ),
        baseline: FLOOR,
      },
      {
        name: RAW_MEMORY,
        args: esm(`const { default: Database } = await import('better-sqlite3'); new Database(':memory:').close();`),
        baseline: FLOOR,
      },
      { name: 'import dist/index.js', args: esm(`await import(${entry});`), baseline: FLOOR },
      {
        name: 'import, openStore(sqlite:<file>), close',
        args: esm(`const { openStore } = await import(${entry}); await (await openStore(${url})).close();`),
        baseline: RAW_FILE,
      },
      {
        name: "import, openStore(':memory:'), close",
        args: esm(`const { openStore } = await import(${entry}); await (await openStore(':memory:')).close();`),
        baseline: RAW_MEMORY,
      },
      {
        name: 'hermes-sessiondb --version',
        args: [
          '--import',
          `data:text/javascript,${encodeURIComponent(`process.on('exit',()=>${REPORT_CPU})`)}`,
          CLI,
          '--version',
        ],
        baseline: FLOOR,
      },
    ]);
    notes.push(
      `coldstart: ${runs} fresh node processes per case, medians; wall = spawn to exit seen by the parent, cpu = user + system of the child`,
    );
    return { rows, notes };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
