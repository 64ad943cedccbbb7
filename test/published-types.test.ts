/**
 * The declarations users install (the packed tarball's .d.ts files) are exact: no `any` type anywhere,
 * and every package they import has its types among our `dependencies` (a devDependency's types are
 * missing for users, which silently turned SqliteBackend.client into `any`, TS7016 under skipLibCheck false).
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { builtinModules } from 'node:module';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT, packedTarball } from './helpers/package.js';

let dir: string;
const declarations = new Map<string, ts.SourceFile>();

beforeAll(async () => {
  const tarball = await packedTarball();
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hsdb-dts-'));
  execFileSync('tar', ['-xzf', tarball, '-C', dir]);
  const walk = (d: string): void => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const full = path.join(d, e.name);
      if (e.isDirectory()) walk(full);
      else if (full.endsWith('.d.ts')) {
        declarations.set(
          path.relative(dir, full),
          ts.createSourceFile(full, fs.readFileSync(full, 'utf8'), ts.ScriptTarget.Latest, true),
        );
      }
    }
  };
  walk(path.join(dir, 'package'));
}, 300_000);

afterAll(() => {
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

function visit(node: ts.Node, each: (n: ts.Node) => void): void {
  each(node);
  ts.forEachChild(node, (child) => visit(child, each));
}

describe('published declarations', () => {
  it('ships the declarations of every entry point', () => {
    expect([...declarations.keys()]).toEqual(
      expect.arrayContaining([
        'package/dist/index.d.ts',
        'package/dist/schema/pg.d.ts',
        'package/dist/schema/sqlite.d.ts',
      ]),
    );
  });

  it('contain no `any` type', () => {
    const found: string[] = [];
    for (const [file, source] of declarations) {
      visit(source, (n) => {
        if (n.kind !== ts.SyntaxKind.AnyKeyword) return;
        const { line } = source.getLineAndCharacterOfPosition(n.getStart());
        found.push(`${file}:${line + 1}: ${n.parent.getText().slice(0, 100)}`);
      });
    }
    expect(found).toEqual([]);
  });

  it('import only packages whose types users get: our dependencies (or their @types), or Node built-ins', () => {
    const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as {
      name: string;
      dependencies: Record<string, string>;
    };
    const deps = new Set(Object.keys(pkg.dependencies));
    const builtins = new Set(builtinModules);
    const missing = new Set<string>();
    for (const [file, source] of declarations) {
      visit(source, (n) => {
        let specifier: string | undefined;
        if (
          (ts.isImportDeclaration(n) || ts.isExportDeclaration(n)) &&
          n.moduleSpecifier &&
          ts.isStringLiteral(n.moduleSpecifier)
        )
          specifier = n.moduleSpecifier.text;
        if (ts.isImportTypeNode(n) && ts.isLiteralTypeNode(n.argument) && ts.isStringLiteral(n.argument.literal))
          specifier = n.argument.literal.text;
        if (!specifier || specifier.startsWith('.') || specifier.startsWith('node:')) return;
        const name = specifier.startsWith('@') ? specifier.split('/').slice(0, 2).join('/') : specifier.split('/')[0]!;
        if (name === pkg.name || builtins.has(name)) return;
        const typesName = `@types/${name.replace('@', '').replace('/', '__')}`;
        if (!deps.has(name)) missing.add(`${file}: ${specifier} (not a dependency)`);
        else if (!hasOwnTypes(name) && !deps.has(typesName))
          missing.add(`${file}: ${specifier} (its types, ${typesName}, are not a dependency)`);
      });
    }
    expect([...missing]).toEqual([]);
  });
});

/** Whether an installed package ships its own declarations (a `types`/`typings` field, or types in its exports). */
function hasOwnTypes(name: string): boolean {
  const manifest = JSON.parse(fs.readFileSync(path.join(ROOT, 'node_modules', name, 'package.json'), 'utf8')) as Record<
    string,
    unknown
  >;
  return Boolean(manifest.types ?? manifest.typings) || JSON.stringify(manifest.exports ?? {}).includes('"types"');
}
