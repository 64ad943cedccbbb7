/**
 * The packed package installed into an app loads everywhere users load it: `import`, `require` (CommonJS apps,
 * drizzle-kit's schema loader) and the migration folders it ships. Before the `require` condition, every
 * `require` here failed with ERR_PACKAGE_PATH_NOT_EXPORTED (and drizzle-kit still exited 0, generating nothing).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FIXTURES, installApp, removeApp, rootBin, run } from './app.js';

const TIMEOUT = 180_000;

interface LoadReport {
  resolved: string[];
  entryExports: string[];
  pgExports: string[];
  sqliteExports: string[];
  dialect: string;
  hits: Array<string | null>;
}

let app: string;
let installed: string;

beforeAll(async () => {
  app = await installApp('load');
  installed = fs.realpathSync(path.join(app, 'node_modules', 'hermes-sessiondb'));
  fs.cpSync(path.join(FIXTURES, 'load'), app, { recursive: true });
  fs.cpSync(path.join(FIXTURES, 'drizzle-app'), app, { recursive: true });
}, 600_000);

afterAll(() => removeApp(app));

async function load(script: string): Promise<LoadReport & Record<string, unknown>> {
  const result = await run(process.execPath, [script], { cwd: app });
  expect(result.code, result.stderr).toBe(0);
  return JSON.parse(result.stdout) as LoadReport & Record<string, unknown>;
}

function expectLoaded(report: LoadReport, greeting: string): void {
  expect(report.resolved).toEqual(
    ['dist/index.js', 'dist/schema/pg.js', 'dist/schema/sqlite.js'].map((file) => path.join(installed, file)),
  );
  expect(report.entryExports).toEqual(
    expect.arrayContaining(['openStore', 'SessionStore', 'SessionDbError', 'migrationsFolder']),
  );
  expect(report.pgExports).toEqual(expect.arrayContaining(['sessions', 'messages']));
  expect(report.sqliteExports).toEqual(expect.arrayContaining(['sessions', 'messages']));
  expect(report.dialect).toBe('pg');
  expect(report.hits).toEqual([expect.stringContaining(greeting)]);
}

describe('the packed package installed into an app', () => {
  it(
    'loads with import: the entry, both schema subpaths, and a store that works',
    async () => {
      const report = await load('esm.mjs');
      expectLoaded(report, 'from an ESM app');
      expect(report.badDialect).toEqual({
        validation: true,
        field: 'dialect',
        message: 'Invalid dialect: must be one of "sqlite", "pg", "mysql", got "oracle"',
      });
    },
    TIMEOUT,
  );

  it(
    'loads with require: the same files, and the very same modules as import (one copy of each class)',
    async () => {
      const report = await load('cjs.cjs');
      expectLoaded(report, 'from a CommonJS app');
      expect(report.sameModuleAsImport).toBe(true);
      expect(report.sameTablesAsImport).toBe(true);
      expect(report.thrownAcrossLoaders).toBe(true);
    },
    TIMEOUT,
  );

  it(
    'migrationsFolder() names the journal and migrations shipped inside the installed package',
    async () => {
      const source = `import { migrationsFolder } from 'hermes-sessiondb';
      console.log(JSON.stringify({ pg: migrationsFolder('pg'), sqlite: migrationsFolder('sqlite') }));`;
      const result = await run(process.execPath, ['--input-type=module', '-e', source], { cwd: app });
      expect(result.code, result.stderr).toBe(0);
      const folders = JSON.parse(result.stdout) as Record<'pg' | 'sqlite', string>;
      for (const dialect of ['pg', 'sqlite'] as const) {
        const folder = folders[dialect];
        expect(folder).toBe(path.join(installed, 'drizzle', dialect));
        const journal = JSON.parse(fs.readFileSync(path.join(folder, 'meta', '_journal.json'), 'utf8')) as {
          dialect: string;
          entries: Array<{ tag: string }>;
        };
        expect(journal.dialect).toBe(dialect === 'pg' ? 'postgresql' : 'sqlite');
        expect(journal.entries.length).toBeGreaterThan(0);
        for (const { tag } of journal.entries) expect(fs.existsSync(path.join(folder, `${tag}.sql`)), tag).toBe(true);
      }
    },
    TIMEOUT,
  );

  // The build thread loads the compiled module beside it (tests of the sources load it through tsx).
  it(
    "builds a store's first search index on its worker thread, from the compiled package",
    async () => {
      const source = `import { openStore } from 'hermes-sessiondb';
      const store = await openStore('pglite:memory');
      await store.createSession('s', 'cli');
      // More queued messages than a one-pass build needs (5,000), so the first search builds on the thread.
      await store.appendMessages('s', Array.from({ length: 5200 }, (_, i) => ({ role: 'user', content: 'message ' + i + ' zebra' + (i % 7) })));
      const hits = await store.searchMessages('zebra3', { limit: 1000 });
      console.log(JSON.stringify({ hits: hits.length, first: hits.at(-1)?.snippet }));
      await store.close();`;
      const result = await run(process.execPath, ['--input-type=module', '-e', source], { cwd: app });
      expect(result.code, result.stderr).toBe(0);
      expect(JSON.parse(result.stdout)).toEqual({ hits: 743, first: expect.stringContaining('>>>zebra3<<<') });
    },
    TIMEOUT,
  );

  // drizzle-kit 0.31 loads an app's schema with require(); the app's schema imports our tables.
  it.each(['pg', 'sqlite'])(
    'drizzle-kit generate loads an app schema that imports hermes-sessiondb/schema/%s',
    async (dialect) => {
      const quote = dialect === 'pg' ? '"' : '`';
      const out = fs.mkdtempSync(path.join(os.tmpdir(), `hsdb-drizzle-out-${dialect}-`));
      try {
        const result = await run(rootBin('drizzle-kit'), ['generate', '--name', 'app_init'], {
          cwd: app,
          env: { DIALECT: dialect, OUT: out },
        });
        const output = `${result.stdout}\n${result.stderr}`;
        expect(result.code, output).toBe(0);
        expect(output).not.toContain('ERR_');

        const sqlFiles = fs.readdirSync(out).filter((f) => f.endsWith('.sql'));
        expect(sqlFiles, output).toEqual(['0000_app_init.sql']);
        const sql = fs.readFileSync(path.join(out, sqlFiles[0]!), 'utf8');
        const q = (name: string) => `${quote}${name}${quote}`;
        // Our tables may sit in a Postgres schema ("hermes"."sessions"): the qualifier is optional here.
        const table = (name: string) => new RegExp(`CREATE TABLE (?:${q('\\w+')}\\.)?${q(name)} \\(`);
        for (const name of ['app_notes', 'sessions', 'messages']) expect(sql).toMatch(table(name));
        // The app's foreign key to our table made it through.
        expect(sql).toMatch(
          new RegExp(`FOREIGN KEY \\(${q('session_id')}\\) REFERENCES [^;]*${q('sessions')}\\(${q('id')}\\)`),
        );

        const snapshot = fs.readFileSync(path.join(out, 'meta', '0000_snapshot.json'), 'utf8');
        expect(snapshot).toContain('app_notes');
      } finally {
        fs.rmSync(out, { recursive: true, force: true });
      }
    },
    TIMEOUT,
  );
});
