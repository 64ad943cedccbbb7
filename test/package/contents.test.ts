/**
 * What `npm pack` puts in the tarball (the same file list `npm pack --dry-run` prints, read from the shared
 * packed tarball so that no second pack rebuilds dist/ under another test): the license, README, dist and
 * migrations; every file package.json points at; no source map or map reference pointing at a file not shipped.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { packedTarball } from '../helpers/package.js';

let dir: string;
let pkg: string;
let files: Set<string>;

beforeAll(async () => {
  const tarball = await packedTarball();
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hsdb-contents-'));
  execFileSync('tar', ['-xzf', tarball, '-C', dir]);
  pkg = path.join(dir, 'package');
  files = new Set(
    fs
      .readdirSync(pkg, { recursive: true, withFileTypes: true })
      .filter((e) => e.isFile())
      .map((e) => path.relative(pkg, path.join(e.parentPath, e.name)).split(path.sep).join('/')),
  );
}, 600_000);

afterAll(() => {
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

interface PackageJson {
  main: string;
  types: string;
  bin: Record<string, string>;
  exports: Record<string, string | Record<string, string>>;
  typesVersions: Record<string, Record<string, string[]>>;
  engines: { node: string };
  license: string;
  repository: { url: string };
  homepage: string;
  bugs: { url: string };
  keywords: string[];
}

const readPackageJson = () => JSON.parse(fs.readFileSync(path.join(pkg, 'package.json'), 'utf8')) as PackageJson;
const shipped = (relative: string) => files.has(path.posix.normalize(relative.replace(/^\.\//, '')));

describe('the packed tarball', () => {
  it('holds the license, README, package.json, dist and every migration folder with every journal entry', () => {
    for (const file of ['LICENSE', 'README.md', 'package.json', 'dist/index.js', 'dist/index.d.ts']) {
      expect(files.has(file), file).toBe(true);
    }
    expect(fs.readFileSync(path.join(pkg, 'LICENSE'), 'utf8')).toMatch(
      /^MIT License\n\nCopyright \(c\) 2026 hermes-sessiondb contributors\n/,
    );
    for (const dialect of ['pg', 'sqlite', 'mysql']) {
      const journal = JSON.parse(
        fs.readFileSync(path.join(pkg, 'drizzle', dialect, 'meta', '_journal.json'), 'utf8'),
      ) as {
        entries: Array<{ tag: string }>;
      };
      for (const { tag } of journal.entries) expect(files.has(`drizzle/${dialect}/${tag}.sql`), tag).toBe(true);
    }
    // Nothing from the repository's working files.
    expect([...files].filter((f) => !/^(dist|drizzle)\//.test(f)).sort()).toEqual([
      'LICENSE',
      'README.md',
      'package.json',
    ]);
  });

  it('ships every file package.json points at (main, types, bin, exports, typesVersions)', () => {
    const manifest = readPackageJson();
    const targets = [manifest.main, manifest.types, ...Object.values(manifest.bin)];
    for (const value of Object.values(manifest.exports)) {
      targets.push(...(typeof value === 'string' ? [value] : Object.values(value)));
    }
    for (const paths of Object.values(manifest.typesVersions['*'] ?? {})) targets.push(...paths);
    expect(targets.length).toBeGreaterThan(10);
    for (const target of targets) expect(shipped(target), target).toBe(true);
  });

  it('has no source map, or map reference, pointing at a file that is not shipped', () => {
    const missing: string[] = [];
    for (const file of files) {
      if (file.endsWith('.map')) {
        const map = JSON.parse(fs.readFileSync(path.join(pkg, file), 'utf8')) as {
          sources: string[];
          sourceRoot?: string;
        };
        for (const source of map.sources) {
          const target = path.posix.join(path.posix.dirname(file), map.sourceRoot ?? '', source);
          if (!shipped(target)) missing.push(`${file} -> ${target}`);
        }
      } else if (/\.(js|d\.ts)$/.test(file)) {
        const reference = /\/\/# sourceMappingURL=(\S+)\s*$/.exec(fs.readFileSync(path.join(pkg, file), 'utf8'));
        if (reference && !shipped(path.posix.join(path.posix.dirname(file), reference[1]!))) {
          missing.push(`${file} -> ${reference[1]}`);
        }
      }
    }
    expect(missing).toEqual([]);
  });

  it('declares its license, repository, homepage, bug tracker, keywords and the Node it needs', () => {
    const manifest = readPackageJson();
    expect(manifest.license).toBe('MIT');
    expect(manifest.repository.url).toBe('git+https://github.com/hermes-sessiondb/hermes-sessiondb.git');
    expect(manifest.homepage).toBe('https://github.com/hermes-sessiondb/hermes-sessiondb#readme');
    expect(manifest.bugs.url).toBe('https://github.com/hermes-sessiondb/hermes-sessiondb/issues');
    expect(manifest.keywords).toEqual(expect.arrayContaining(['drizzle', 'sqlite', 'postgresql']));
    // The Node lines where require(esm) works without a flag (22.0-22.11 needed --experimental-require-module).
    expect(manifest.engines.node).toBe('^20.19.0 || >=22.12.0');
  });
});
