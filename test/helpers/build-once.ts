/**
 * Test inputs built once and shared under .tmp/<kind>/<hash>: vitest runs files in parallel forks, so a directory
 * lock keeps each to one builder, and a later run reuses it. <hash> covers everything the built bytes depend on.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

export const ROOT = path.resolve(import.meta.dirname, '../..');

/** A short hash of the files (or whole folders) at `paths` under ROOT, plus `extra`. */
export function contentHash(paths: readonly string[], extra = ''): string {
  const hash = crypto.createHash('sha256');
  const visit = (rel: string) => {
    const full = path.join(ROOT, rel);
    if (!fs.existsSync(full)) return;
    if (fs.statSync(full).isDirectory()) {
      for (const name of fs.readdirSync(full).sort()) visit(path.join(rel, name));
    } else hash.update(rel).update('\0').update(fs.readFileSync(full)).update('\0');
  };
  for (const rel of paths) visit(rel);
  return hash.update(extra).digest('hex').slice(0, 16);
}

/**
 * The path `.tmp/<kind>/<name>`, built by `build(partial)` if no process has yet: `build` writes a file or a
 * directory at `partial`, which is then renamed, so a reader never sees a half-built one.
 */
export async function buildOnce(
  kind: string,
  name: string,
  build: (partial: string) => Promise<void>,
): Promise<string> {
  const dir = path.join(ROOT, '.tmp', kind);
  const target = path.join(dir, name);
  const lock = `${target}.lock`;
  fs.mkdirSync(dir, { recursive: true });
  for (let waited = 0; ; waited += 200) {
    if (fs.existsSync(target)) return target;
    try {
      fs.mkdirSync(lock);
      break;
    } catch {
      if (waited > 600_000) throw new Error(`gave up waiting for another process building ${target} (lock ${lock})`);
      await sleep(200);
    }
  }
  try {
    if (fs.existsSync(target)) return target;
    const partial = `${target}.partial`;
    fs.rmSync(partial, { recursive: true, force: true });
    await build(partial);
    fs.renameSync(partial, target);
    return target;
  } finally {
    fs.rmSync(lock, { recursive: true, force: true });
  }
}
