/**
 * No input is ever interpolated into SQL. Values always travel as parameters; the only SQL built from
 * strings is built from identifiers this library owns (schema columns, fixed keywords, checked-in
 * migration files). That text lives in src/sql/ and in the engines' SQL files (SQL_FILES); anywhere else,
 * every occurrence must be listed here with the reason it is safe, and the count is pinned, so a new one
 * fails until someone reviews it.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const SRC = path.resolve(import.meta.dirname, '../../src');

/**
 * String-built SQL: Drizzle's sql.raw, postgres.js unsafe, and better-sqlite3 calls (or the SQLite worker's
 * statement/script, or mysql2's query) given a template with ${…}.
 */
const PATTERN = /sql\.raw\(|\.unsafe\(|\.(prepare|exec|pragma|statement|script|query)\(\s*`(?:[^`\\]|\\.)*\$\{/g;

/** One engine's SQL fragments, kept in that engine's folder: exempt as src/sql/ is. */
const SQL_FILES = new Set([
  'db/pg/search.ts',
  'db/pg/search-blocks.ts',
  'db/pg/append-statement.ts',
  'db/mysql/search.ts',
  'db/mysql/search-blocks.ts',
  'db/mysql/block-rows.ts',
  'db/sqlite/search.ts',
  'db/sqlite/content-expressions.ts',
  'db/sqlite/deferred-triggers.ts',
  'db/sqlite/spelling.ts',
  'db/pg/spelling.ts',
  'db/mysql/spelling.ts',
]);

const ALLOWED: Record<string, { count: number; why: string }> = {
  'db/pg/open.ts': {
    count: 6,
    why: 'runs SQL text compiled by Drizzle with its parameter array (in transactions, reads on the pool, and the append statements of db/pg/append-statement.ts alone or in one), and the fixed BEGIN/COMMIT/ROLLBACK',
  },
  'db/pg/migrate.ts': { count: 1, why: 'statements of the checked-in migration files' },
  'db/mysql/migrate.ts': {
    count: 5,
    why: 'our own history and steps table names (constants), quoted with backticks; values travel as parameters',
  },
  'db/pg/testing.ts': {
    count: 1,
    why: "the contract suite's setup statements: fixed text written in the suite's own tests, never input",
  },
  'db/mysql/testing.ts': { count: 1, why: "the contract suite's empty store: TRUNCATE of our fixed table list" },
  'db/mysql/runner.ts': {
    count: 2,
    why: 'OPTIMIZE of our fixed table list, RETURNING id after an INSERT compiled by Drizzle with its parameter array',
  },
  'db/sqlite/open.ts': {
    count: 2,
    why: 'pragmas from validated options: an integer timeout and an enum synchronous level',
  },
  'repos/bulk-read.ts': { count: 1, why: 'column names from the fixed SESSION_*/MESSAGE_* lists' },
  'repos/maintenance.ts': { count: 3, why: "GROUP BY a column chosen from the literal type 'model' | 'source'" },
  'repos/messages.ts': { count: 1, why: 'a table alias chosen in code' },
  'transfer/sources.ts': {
    count: 5,
    why: "a Hermes file's own table and column names (from sqlite_master, quoted with doubled quotes), read or checked (quick_check per table) in the import's private snapshot (some through the SQLite worker thread)",
  },
};

function sourceFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const full = path.join(dir, e.name);
    return e.isDirectory() ? sourceFiles(full) : e.name.endsWith('.ts') ? [full] : [];
  });
}

describe('SQL built from strings', () => {
  it("appears outside src/sql/ and the engines' SQL files only where listed, with a reason, and no more often than listed", () => {
    const found: Record<string, number> = {};
    for (const file of sourceFiles(SRC)) {
      const rel = path.relative(SRC, file).split(path.sep).join('/');
      if (rel.startsWith('sql/') || SQL_FILES.has(rel)) continue;
      const n = fs.readFileSync(file, 'utf8').match(PATTERN)?.length ?? 0;
      if (n > 0) found[rel] = n;
    }
    expect(found).toEqual(Object.fromEntries(Object.entries(ALLOWED).map(([f, a]) => [f, a.count])));
  });

  it('catches the patterns it is meant to catch', () => {
    // Source text the lint must catch: the ${…} inside these strings is the point, not a template slip.
    const samples = [
      'sql.raw(`x`)',
      "client.unsafe('BEGIN')",
      // biome-ignore lint/suspicious/noTemplateCurlyInString: sample source text
      'db.prepare(`SELECT * FROM ${table}`)',
      // biome-ignore lint/suspicious/noTemplateCurlyInString: sample source text
      'db.exec(`DROP ${x}`)',
      // biome-ignore lint/suspicious/noTemplateCurlyInString: sample source text
      'db.pragma(`a = ${b}`)',
      // biome-ignore lint/suspicious/noTemplateCurlyInString: sample source text, as the formatter wraps a long call
      'worker.statement(\n  `SELECT COUNT(*) FROM ${t}`',
    ];
    for (const s of samples) expect(s.match(PATTERN), s).not.toBeNull();
    expect('db.prepare(`SELECT 1`)'.match(PATTERN)).toBeNull();
    expect("db.prepare('SELECT * FROM t WHERE id = ?')".match(PATTERN)).toBeNull();
  });
});
