/**
 * A throwaway app that installs the packed tarball the way users do (`npm install <tarball>`), for the tests in
 * this folder. One per test file, shared by its cases.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { packedTarball, ROOT } from '../helpers/package.js';

const execFileAsync = promisify(execFile);

export const FIXTURES = path.join(import.meta.dirname, 'fixtures');

export interface RunResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Run a command to completion; a non-zero exit is returned, not thrown, so tests can show its output. */
export async function run(
  command: string,
  args: string[],
  options: { cwd: string; env?: NodeJS.ProcessEnv },
): Promise<RunResult> {
  try {
    const { stdout, stderr } = await execFileAsync(command, args, {
      cwd: options.cwd,
      env: { ...process.env, ...options.env },
      maxBuffer: 64 * 1024 * 1024,
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const e = error as { code?: unknown; stdout?: string; stderr?: string; message: string };
    return { code: typeof e.code === 'number' ? e.code : 1, stdout: e.stdout ?? '', stderr: e.stderr ?? e.message };
  }
}

/** A binary of this repository's dev dependencies (tsc, drizzle-kit), run against the app. */
export const rootBin = (name: string) => path.join(ROOT, 'node_modules', '.bin', name);

/**
 * A temp app (`"type": "module"`) with the packed tarball and `extra` packages installed. `--ignore-scripts`
 * skips better-sqlite3's native compile (a minute on two cores): these tests open PGlite stores and never load
 * the SQLite driver's binary, and the package itself has no install script.
 */
export async function installApp(name: string, extra: string[] = []): Promise<string> {
  const tarball = await packedTarball();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `hsdb-${name}-`));
  fs.writeFileSync(
    path.join(dir, 'package.json'),
    JSON.stringify({ name: `hsdb-${name}`, private: true, type: 'module' }, null, 2),
  );
  const install = await run(
    'npm',
    [
      'install',
      tarball,
      ...extra,
      '--no-audit',
      '--no-fund',
      '--prefer-offline',
      '--ignore-scripts',
      '--no-package-lock',
    ],
    { cwd: dir },
  );
  if (install.code !== 0) throw new Error(`npm install failed in ${dir}:\n${install.stdout}\n${install.stderr}`);
  return dir;
}

export function removeApp(dir: string | undefined): void {
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
}
