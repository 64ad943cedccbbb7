/**
 * The package as users get it: `npm pack` of this checkout, built once per content and shared by every test
 * file that installs it (vitest runs files in parallel forks, so a directory lock keeps it to one pack).
 *
 * The tarball lives in .tmp/pack/<hash>/, where <hash> covers everything the pack contains or builds from
 * (src, drizzle, package.json, README, LICENSE, tsconfig*): an unchanged checkout reuses it.
 */
import { execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

export const ROOT = path.resolve(import.meta.dirname, '../..');

const HASHED = ['src', 'drizzle', 'package.json', 'README.md', 'LICENSE', 'tsconfig.json', 'tsconfig.build.json'];

function contentHash(): string {
  const hash = crypto.createHash('sha256');
  const visit = (rel: string) => {
    const full = path.join(ROOT, rel);
    if (!fs.existsSync(full)) return;
    const stat = fs.statSync(full);
    if (stat.isDirectory()) {
      for (const name of fs.readdirSync(full).sort()) visit(path.join(rel, name));
    } else {
      hash.update(rel).update('\0').update(fs.readFileSync(full)).update('\0');
    }
  };
  for (const rel of HASHED) visit(rel);
  return hash.digest('hex').slice(0, 16);
}

/** Path of the packed tarball (`npm pack`, which builds through `prepare`), packing it if needed. */
export async function packedTarball(): Promise<string> {
  const dir = path.join(ROOT, '.tmp', 'pack', contentHash());
  const done = path.join(dir, 'tarball-path');
  const lock = `${dir}.lock`;
  fs.mkdirSync(path.dirname(dir), { recursive: true });
  for (let waited = 0; ; waited += 200) {
    if (fs.existsSync(done)) return fs.readFileSync(done, 'utf8');
    try {
      fs.mkdirSync(lock);
      break;
    } catch {
      if (waited > 300_000) throw new Error(`gave up waiting for another process packing into ${dir} (lock ${lock})`);
      await sleep(200);
    }
  }
  try {
    if (fs.existsSync(done)) return fs.readFileSync(done, 'utf8');
    fs.rmSync(dir, { recursive: true, force: true });
    fs.mkdirSync(dir, { recursive: true });
    const out = execFileSync('npm', ['pack', '--json', '--pack-destination', dir], {
      cwd: ROOT,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const [info] = JSON.parse(out.slice(out.indexOf('['))) as Array<{ filename: string }>;
    const tarball = path.join(dir, info!.filename);
    fs.writeFileSync(done, tarball);
    return tarball;
  } finally {
    fs.rmSync(lock, { recursive: true, force: true });
  }
}
