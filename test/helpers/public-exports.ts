/**
 * The public API as users see it: for each package.json entry point, every exported name with its kind. Values
 * are read by importing the entry's source file; type-only names (interfaces, type aliases) come from the
 * TypeScript checker. Shared by test/public-exports.test.ts and scripts/exports-snapshot.ts so both compute the same.
 */
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import ts from 'typescript';
import { ROOT } from './package.js';

/** `typeof` of the runtime value, `class` for a class, `type` for a name that exists only in the types. */
export type ExportKind = 'class' | 'function' | 'object' | 'string' | 'number' | 'boolean' | 'bigint' | 'type';

/** Entry point (package.json `exports` key) to exported name to kind; names and entries sorted. */
export type PublicExports = Record<string, Record<string, ExportKind>>;

export const SNAPSHOT_FILE = path.join(ROOT, 'test', 'package', 'exports.snapshot.json');

export interface ExportsSnapshot {
  comment: string;
  entries: PublicExports;
}

/** Each module entry point of package.json `exports` with the source file its `import` target is built from. */
export function entryPoints(): Array<{ entry: string; source: string }> {
  const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as {
    exports: Record<string, string | { import?: string }>;
  };
  const entries: Array<{ entry: string; source: string }> = [];
  for (const [entry, target] of Object.entries(pkg.exports)) {
    // './package.json' maps to a file, not a module with exports.
    if (typeof target === 'string') continue;
    const built = target.import;
    if (built === undefined || !/^\.\/dist\/.*\.js$/.test(built)) {
      throw new Error(`package.json exports["${entry}"].import is not a ./dist/*.js file: ${String(built)}`);
    }
    const source = path.join(ROOT, built.replace(/^\.\/dist\//, 'src/').replace(/\.js$/, '.ts'));
    if (!fs.existsSync(source)) throw new Error(`no source file for exports["${entry}"]: ${source}`);
    entries.push({ entry, source });
  }
  return entries.sort((a, b) => compare(a.entry, b.entry));
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function runtimeKind(value: unknown): ExportKind {
  const kind = typeof value;
  if (kind === 'function') {
    return Function.prototype.toString.call(value).startsWith('class') ? 'class' : 'function';
  }
  if (kind === 'symbol' || kind === 'undefined') throw new Error(`unexpected export of type ${kind}`);
  return kind;
}

/**
 * Every name each entry's source exports at the type level (values included). The program holds only the entries
 * and the files they `export *` from: the names of `export { a } from`, `export * as` and local declarations are
 * in the exporting file itself, so the rest of src (and drizzle's declarations) need not be parsed.
 */
function typeLevelNames(sources: string[]): Map<string, string[]> {
  const config = ts.readConfigFile(path.join(ROOT, 'tsconfig.json'), ts.sys.readFile);
  const { options: base } = ts.parseJsonConfigFileContent(config.config, ts.sys, ROOT);
  const options: ts.CompilerOptions = { ...base, noEmit: true, noResolve: true, noLib: true, types: [] };
  const parsed = new Map<string, ts.SourceFile>();
  const parse = (file: string): ts.SourceFile => {
    let sf = parsed.get(file);
    if (sf === undefined) {
      sf = ts.createSourceFile(file, fs.readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
      parsed.set(file, sf);
    }
    return sf;
  };
  const pending = [...sources];
  for (let file = pending.pop(); file !== undefined; file = pending.pop()) {
    for (const statement of parse(file).statements) {
      if (!ts.isExportDeclaration(statement) || statement.exportClause !== undefined) continue;
      const specifier = (statement.moduleSpecifier as ts.StringLiteral).text;
      if (!specifier.startsWith('.')) throw new Error(`${file}: export * from a package ('${specifier}') is not read`);
      const target = path.resolve(path.dirname(file), specifier.replace(/\.js$/, '.ts'));
      if (!parsed.has(target)) pending.push(target);
    }
  }
  const host = ts.createCompilerHost(options);
  const hostGetSourceFile = host.getSourceFile;
  host.getSourceFile = (file, ...rest) => parsed.get(path.resolve(file)) ?? hostGetSourceFile(file, ...rest);
  const program = ts.createProgram([...parsed.keys()], options, host);
  const checker = program.getTypeChecker();
  const names = new Map<string, string[]>();
  for (const source of sources) {
    const file = program.getSourceFile(source);
    const module = file && checker.getSymbolAtLocation(file);
    if (module === undefined) throw new Error(`TypeScript found no module in ${source}`);
    names.set(
      source,
      checker.getExportsOfModule(module).map((s) => s.getName()),
    );
  }
  return names;
}

/** The public exports of this checkout's source. */
export async function publicExports(): Promise<PublicExports> {
  const entries = entryPoints();
  const types = typeLevelNames(entries.map((e) => e.source));
  const result: PublicExports = {};
  for (const { entry, source } of entries) {
    const runtime = (await import(pathToFileURL(source).href)) as Record<string, unknown>;
    const kinds = new Map<string, ExportKind>();
    for (const name of types.get(source) ?? []) kinds.set(name, 'type');
    for (const [name, value] of Object.entries(runtime)) kinds.set(name, runtimeKind(value));
    result[entry] = Object.fromEntries([...kinds].sort(([a], [b]) => compare(a, b)));
  }
  return result;
}

/** Differences between the snapshot and the current exports, one line each; empty when they agree. */
export function exportChanges(expected: PublicExports, actual: PublicExports): { broken: string[]; added: string[] } {
  const broken: string[] = [];
  const added: string[] = [];
  for (const entry of Object.keys(expected)) {
    const now = Object.hasOwn(actual, entry) ? actual[entry] : undefined;
    if (now === undefined) {
      broken.push(`entry point "${entry}" is gone`);
      continue;
    }
    for (const [name, kind] of Object.entries(expected[entry]!)) {
      const current = Object.hasOwn(now, name) ? now[name] : undefined;
      if (current === undefined) broken.push(`"${entry}": ${name} (${kind}) is no longer exported`);
      else if (current !== kind) broken.push(`"${entry}": ${name} changed kind from ${kind} to ${current}`);
    }
  }
  for (const [entry, names] of Object.entries(actual)) {
    const before = Object.hasOwn(expected, entry) ? expected[entry] : undefined;
    if (before === undefined) {
      added.push(`entry point "${entry}" is new`);
      continue;
    }
    for (const [name, kind] of Object.entries(names)) {
      if (!Object.hasOwn(before, name)) added.push(`"${entry}": ${name} (${kind}) is new`);
    }
  }
  return { broken, added };
}
