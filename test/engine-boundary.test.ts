/**
 * An engine is one folder: outside `src/db/<engine>/`, the engine's schema file and the registry
 * (`src/db/engines.ts`, and `src/db/engine-options.ts` for its zod options), no source file names an engine
 * in code — an identifier (`PgBackend`, `openSqlite`), a string that is an engine's name, driver, scheme or
 * URL (`'pg'`, `'pglite:'`, `` `sqlite:${path}` ``), a regular expression naming one, or an import of an
 * engine's module — so a fifth engine is a new folder and one registry line. Comments and prose (help text,
 * messages, test titles) may mention engines: they explain, they do not branch. Read with TypeScript's
 * parser, so a name in a comment is not a hit.
 */
import fs from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { expect, it } from 'vitest';

const SRC = path.join(import.meta.dirname, '..', 'src');
const ENGINES = ['sqlite', 'pg', 'mysql'];

/** Where an engine may be named: its own folder, its schema file, the registry (and its options half). */
function engineOwned(rel: string): boolean {
  return (
    ENGINES.some((e) => rel.startsWith(`db/${e}/`) || rel === `schema/${e}.ts`) ||
    rel === 'db/engines.ts' ||
    rel === 'db/engine-options.ts'
  );
}

/** Shared files that name an engine, each with why it must (file → the names it may use there). */
const ALLOWED: Record<string, { names: RegExp; why: string }> = {
  'index.ts': {
    names: /./,
    why: "the package's public names, a contract (test/public-exports.test.ts): each engine's backend, schema, client types and row decoders are exported by name",
  },
  'db/backend.ts': {
    names: /^(better-sqlite3|postgres|pglite|mysql2)$/,
    why: 'DriverName, a public type: the union of the driver packages, as `backend.driver` reports them',
  },
  'cli/shared.ts': {
    names: /^sqlite:\.\/hermes-sessiondb\.db$/,
    why: "the CLI's default store when --db is not given",
  },
  'transfer/sources.ts': {
    names: /^(better-sqlite3|SqliteWorker|\.\.\/db\/sqlite\/worker\.js)$/,
    why: "a Hermes state.db is an SQLite file by definition: the import reads it with the SQLite engine's worker",
  },
};

/** An engine's name inside an identifier (`openSqlite`, `PgBackend`, `pgSchema`). */
const IDENTIFIER = /sqlite|pglite|postgres|mysql|mariadb|(^|[a-z_])pg($|[A-Z_\d])|^Pg/i;
/** A string that is an engine's name, driver or scheme, or starts a URL of one. */
const TAG = /^(sqlite3?|better-sqlite3|pglite|postgres(ql)?|mysql2?|mariadb|pg)(:|$)/i;
/** A regular expression that reads an engine's scheme or name. */
const PATTERN = /sqlite|pglite|postgres|mysql|mariadb|\bpg\b/i;
const ENGINE_MODULE = /\/(db\/(sqlite|pg|mysql)\/|schema\/(sqlite|pg|mysql)(\.js)?$)/;

function sourceFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(full);
    return entry.name.endsWith('.ts') ? [full] : [];
  });
}

/** Every engine name in `file`'s code, as `line: text`. */
function engineNames(file: string): string[] {
  const source = ts.createSourceFile(file, fs.readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
  const hits: string[] = [];
  const hit = (node: ts.Node, text: string) =>
    hits.push(`${source.getLineAndCharacterOfPosition(node.getStart()).line + 1}: ${text.slice(0, 60)}`);
  const visit = (node: ts.Node) => {
    if (ts.isIdentifier(node) || ts.isPrivateIdentifier(node)) {
      if (IDENTIFIER.test(node.text)) hit(node, node.text);
    } else if (ts.isStringLiteralLike(node) || ts.isTemplateLiteralToken(node)) {
      const isModule =
        node.parent &&
        (ts.isImportDeclaration(node.parent) ||
          ts.isExportDeclaration(node.parent) ||
          ts.isCallExpression(node.parent));
      if (TAG.test(node.text) || (isModule && ENGINE_MODULE.test(node.text))) hit(node, node.text);
    } else if (ts.isRegularExpressionLiteral(node) && PATTERN.test(node.text)) hit(node, node.text);
    ts.forEachChild(node, visit);
  };
  visit(source);
  return hits;
}

it('names an engine only in its folder, its schema, the registry and the few places that say why', () => {
  const found: Record<string, string[]> = {};
  for (const file of sourceFiles(SRC)) {
    const rel = path.relative(SRC, file).split(path.sep).join('/');
    if (engineOwned(rel)) continue;
    const allowed = ALLOWED[rel];
    const hits = engineNames(file).filter((h) => !allowed?.names.test(h.slice(h.indexOf(': ') + 2)));
    if (hits.length > 0) found[rel] = hits;
  }
  expect(found).toEqual({});
});

it('sees an engine named in code, and not one named in a comment or prose', () => {
  const dir = fs.mkdtempSync(path.join(import.meta.dirname, '..', 'node_modules', '.engine-boundary-'));
  try {
    const file = path.join(dir, 'probe.ts');
    fs.writeFileSync(
      file,
      [
        '// a comment about Postgres and SQLite',
        "import { PgBackend } from '../db/pg/backend.js';",
        "const help = 'the schema of a Postgres store';",
        // biome-ignore lint/suspicious/noTemplateCurlyInString: the probe's source holds a template literal
        "if (store.dialect === 'pg') open(`sqlite:${path}`);",
        'const scheme = /^mysql:/;',
      ].join('\n'),
    );
    expect(engineNames(file).map((h) => h.slice(h.indexOf(': ') + 2))).toEqual([
      'PgBackend',
      '../db/pg/backend.js',
      'pg',
      'sqlite:',
      '/^mysql:/',
    ]);
  } finally {
    fs.rmSync(dir, { recursive: true });
  }
});
