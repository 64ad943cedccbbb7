/** Run drizzle-kit for one dialect through drizzle.config.ts (DRIZZLE_DIALECT / DRIZZLE_OUT pick the target). */
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import path from 'node:path';

export const DIALECTS = ['sqlite', 'pg', 'mysql'] as const;
export type Dialect = (typeof DIALECTS)[number];

const require = createRequire(import.meta.url);
const drizzleKitBin = path.join(path.dirname(require.resolve('drizzle-kit')), 'bin.cjs');

export function drizzleKit(dialect: Dialect, args: string[], env: Record<string, string> = {}) {
  return spawnSync(process.execPath, [drizzleKitBin, ...args], {
    env: { ...process.env, DRIZZLE_DIALECT: dialect, ...env },
    encoding: 'utf8',
    // No terminal: drizzle-kit must never sit waiting for an interactive rename prompt.
    stdio: ['ignore', 'pipe', 'pipe'],
    timeout: 120_000,
  });
}
