/**
 * The recipe of docs/drizzle-app.md ("Using it inside your own Drizzle app"), run as a user runs it: the packed
 * package installed into examples/drizzle-app (a temp copy), then its own drizzle-kit and scripts, on PGlite
 * and on the real Postgres server. Every command the page shows is run here.
 *
 * The copy's app migrations are re-dated to before ours: an app older than the store's newest migration is
 * the case where a shared migration history made drizzle-kit skip the app's migrations silently.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { PGlite } from '@electric-sql/pglite';
import Database from 'better-sqlite3';
import { pg_trgm } from '@electric-sql/pglite/contrib/pg_trgm';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, pgliteHarness, postgresHarness, reportAvailability } from '../backends.js';
import { ROOT, packedTarball } from '../helpers/package.js';

const run = promisify(execFile);
const EXAMPLE = path.join(ROOT, 'examples', 'drizzle-app');
/** Installs take 30-60 s on 2 cores; each drizzle-kit or tsx run boots a process (and PGlite its WASM). */
const INSTALL_TIMEOUT = 600_000;
const STEP_TIMEOUT = 240_000;

/** The store's Postgres tables (the five Drizzle tables and the block index of migration 0010). */
const OUR_TABLES = [
  'message_search_blocks',
  'message_search_merged',
  'message_search_recent',
  'message_search_removed',
  'messages',
  'sessions',
  'state_meta',
  'telegram_dm_topic_bindings',
  'telegram_dm_topic_mode',
];
/** In schema hermes the store's migration history sits next to its tables (default layout: schema hermes_sessiondb). */
const OUR_TABLES_IN_HERMES = [...OUR_TABLES, '__hermes_sessiondb_migrations'].sort();
const APP_TABLES = ['app_notes', 'sessions'];
const SEARCH_INDEXES = ['idx_messages_search_cjk'];

interface Result {
  code: number;
  stdout: string;
  stderr: string;
}

let appDir = '';
let workDir = '';

/** Run a binary installed in the app, in the app's folder, against `url`. Never throws: the test reads the code. */
async function inApp(bin: 'drizzle-kit' | 'tsx' | 'tsc', args: string[], url?: string): Promise<Result> {
  try {
    const { stdout, stderr } = await run(path.join(appDir, 'node_modules', '.bin', bin), args, {
      cwd: appDir,
      env: { ...process.env, ...(url ? { DATABASE_URL: url } : {}), FORCE_COLOR: '0', NO_COLOR: '1' },
      maxBuffer: 64 * 1024 * 1024,
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const e = error as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof e.code === 'number' ? e.code : 1, stdout: e.stdout ?? '', stderr: e.stderr ?? String(error) };
  }
}

/** Like inApp, but the command must succeed; the failure message carries its output. */
async function mustRun(bin: 'drizzle-kit' | 'tsx' | 'tsc', args: string[], url?: string): Promise<string> {
  const r = await inApp(bin, args, url);
  if (r.code !== 0) throw new Error(`${bin} ${args.join(' ')} exited ${r.code}\n${r.stdout}\n${r.stderr}`);
  return r.stdout;
}

/** The JSON line a script printed last. */
function lastJson<T>(stdout: string): T {
  const line = stdout
    .trim()
    .split('\n')
    .filter((l) => l.startsWith('{') || l.startsWith('['))
    .at(-1);
  if (!line) throw new Error(`no JSON line in:\n${stdout}`);
  return JSON.parse(line) as T;
}

/** Run catalog queries on the database at `url` (PGlite only while no app process has it open). */
async function catalog<T>(url: string, query: string): Promise<T[]> {
  if (url.startsWith('pglite:')) {
    const db = new PGlite(url.slice('pglite:'.length), { extensions: { pg_trgm } });
    try {
      return (await db.query<T>(query)).rows;
    } finally {
      await db.close();
    }
  }
  const sql = postgres(url, { max: 1, onnotice: () => {} });
  try {
    return (await sql.unsafe(query)) as unknown as T[];
  } finally {
    await sql.end({ timeout: 5 });
  }
}

const tablesIn = async (url: string, schema: string) =>
  (
    await catalog<{ name: string }>(
      url,
      `SELECT table_name AS name FROM information_schema.tables
     WHERE table_schema = '${schema}' AND table_type = 'BASE TABLE'`,
    )
  )
    .map((r) => r.name)
    .sort();

/** What search depends on on messages and drizzle-kit does not know: the generated CJK grams and their GIN index. */
async function searchStructures(url: string, schema: string) {
  const column = await catalog<{ type: string }>(
    url,
    `SELECT data_type AS type FROM information_schema.columns
     WHERE table_schema = '${schema}' AND table_name = 'messages' AND column_name = 'search_cjk'`,
  );
  const indexes = await catalog<{ name: string; method: string }>(
    url,
    `SELECT c.relname AS name, am.amname AS method
     FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace JOIN pg_am am ON am.oid = c.relam
     WHERE n.nspname = '${schema}' AND c.relname IN (${SEARCH_INDEXES.map((i) => `'${i}'`).join(', ')}) ORDER BY 1`,
  );
  return { searchCjk: column[0]?.type ?? null, indexes: indexes.map((i) => `${i.name} (${i.method})`) };
}
const INTACT = { searchCjk: 'ARRAY', indexes: SEARCH_INDEXES.map((i) => `${i} (gin)`) };

beforeAll(async () => {
  const tarball = await packedTarball();
  workDir = fs.mkdtempSync(path.join(os.tmpdir(), 'hsdb-drizzle-app-'));
  appDir = path.join(workDir, 'app');
  fs.cpSync(EXAMPLE, appDir, {
    recursive: true,
    filter: (src) => !/[\\/](node_modules|\.data)$/.test(src),
  });
  const manifestPath = path.join(appDir, 'package.json');
  const manifest = JSON.parse(fs.readFileSync(manifestPath, 'utf8')) as { dependencies: Record<string, string> };
  manifest.dependencies['hermes-sessiondb'] = `file:${tarball}`;
  fs.writeFileSync(manifestPath, JSON.stringify(manifest, null, 2));

  // An app whose migrations predate ours (1 January 2024).
  const journalPath = path.join(appDir, 'drizzle', 'meta', '_journal.json');
  const journal = JSON.parse(fs.readFileSync(journalPath, 'utf8')) as { entries: Array<{ when: number }> };
  for (const [i, entry] of journal.entries.entries()) entry.when = Date.UTC(2024, 0, 1) + i * 1000;
  fs.writeFileSync(journalPath, JSON.stringify(journal, null, 2));

  await run('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline'], {
    cwd: appDir,
    maxBuffer: 64 * 1024 * 1024,
  });
}, INSTALL_TIMEOUT);

afterAll(() => {
  if (workDir) fs.rmSync(workDir, { recursive: true, force: true });
});

it(
  'the example compiles against the installed package (types of hermesPgTables and openStore included)',
  async () => {
    const r = await inApp('tsc', ['-p', 'tsconfig.json', '--noEmit']);
    expect(r.stdout + r.stderr).toBe('');
    expect(r.code).toBe(0);
  },
  STEP_TIMEOUT,
);

it(
  'SQLite file shared with the app: push with the documented tablesFilter keeps the FTS5 tables and triggers',
  async () => {
    const file = path.join(workDir, 'app.db');
    const url = `sqlite:${file}`;
    const { sessionId } = lastJson<{ sessionId: string }>(
      await mustRun('tsx', ['src/store-tool.ts', 'seed', '--default-layout'], url),
    );
    const searchObjects = () => {
      const db = new Database(file, { readonly: true });
      try {
        return db
          .prepare("SELECT type, name FROM sqlite_master WHERE name LIKE 'messages_fts%' ORDER BY type, name")
          .all();
      } finally {
        db.close();
      }
    };
    const before = searchObjects();
    expect(before.filter((o) => (o as { type: string }).type === 'table')).toHaveLength(12);

    const push = await mustRun('drizzle-kit', ['push', '--config', 'drizzle.sqlite.config.ts'], url);
    expect(push).toContain('CREATE TABLE `app_notes`');
    expect(push).not.toMatch(/DROP|messages/);
    expect(searchObjects()).toEqual(before);
    const hits = lastJson<Array<{ sessionId: string }>>(
      await mustRun('tsx', ['src/store-tool.ts', 'search', 'healthcheck', '--default-layout'], url),
    );
    expect(hits.map((hit) => hit.sessionId)).toEqual([sessionId, sessionId]);
  },
  STEP_TIMEOUT,
);

it(
  'the checked-in app migrations match the app schema (drizzle-kit generate has nothing to write)',
  async () => {
    expect(await mustRun('drizzle-kit', ['generate'])).toContain('No schema changes');
  },
  STEP_TIMEOUT,
);

const harnesses: Harness[] = [pgliteHarness(), await postgresHarness()];

for (const h of harnesses) {
  const available = reportAvailability(h);
  describe.skipIf(!available)(
    `the Drizzle app example [${h.name}]${available ? '' : ` (skipped: ${h.unavailable})`}`,
    () => {
      afterAll(() => h.cleanup());

      it(
        'app migrated first (drizzle-kit migrate), then the store in schema hermes: one query joins notes and messages',
        async () => {
          const url = await h.freshUrl();
          await mustRun('drizzle-kit', ['migrate'], url);
          const out = lastJson<{
            sessionId: string;
            joined: Array<{ note: string; role: string; content: string }>;
            searchHits: Array<{ sessionId: string; role: string }>;
          }>(await mustRun('tsx', ['src/main.ts'], url));

          expect(out.joined).toEqual([
            {
              note: 'customer asked for a postmortem',
              role: 'user',
              content: 'The nightly deploy failed with a healthcheck timeout',
            },
            {
              note: 'customer asked for a postmortem',
              role: 'assistant',
              content: 'Raise the healthcheck timeout to 30 seconds and redeploy',
            },
          ]);
          expect(out.searchHits.map((hit) => hit.sessionId)).toContain(out.sessionId);
          expect(await tablesIn(url, 'public')).toEqual(APP_TABLES);
          expect(await tablesIn(url, 'hermes')).toEqual(OUR_TABLES_IN_HERMES);
          // Each history names only its own migrations.
          expect(await catalog(url, 'SELECT count(*)::int AS n FROM drizzle.__drizzle_migrations')).toEqual([{ n: 1 }]);
          expect(await searchStructures(url, 'hermes')).toEqual(INTACT);
        },
        STEP_TIMEOUT,
      );

      it(
        'store first, then the app (migrations dated before ours): drizzle-kit applies them, every table of both present',
        async () => {
          const url = await h.freshUrl();
          const status = lastJson<{ pending: string[]; applied: string[] }>(
            await mustRun('tsx', ['src/store-tool.ts', 'status'], url),
          );
          expect(status.pending).toEqual([]);
          expect(status.applied.length).toBeGreaterThan(0);
          await mustRun('drizzle-kit', ['migrate'], url);
          expect(await tablesIn(url, 'public')).toEqual(APP_TABLES);
          expect(await tablesIn(url, 'hermes')).toEqual(OUR_TABLES_IN_HERMES);

          const out = lastJson<{ joined: unknown[] }>(await mustRun('tsx', ['src/main.ts'], url));
          expect(out.joined).toHaveLength(2);
        },
        STEP_TIMEOUT,
      );

      it(
        'drizzle-kit push (schemaFilter public) creates the app tables and leaves the store in schema hermes alone',
        async () => {
          const url = await h.freshUrl();
          const { sessionId } = lastJson<{ sessionId: string }>(
            await mustRun('tsx', ['src/store-tool.ts', 'seed'], url),
          );
          // Without --force: a statement that could lose data would stop at a prompt (no TTY here) and fail the run.
          const first = await mustRun('drizzle-kit', ['push'], url);
          expect(first).toContain('CREATE TABLE "app_notes"');
          expect(first).not.toMatch(/"hermes"|DROP /);
          // A second push finds nothing to do: the store's tables never enter the diff.
          expect(await mustRun('drizzle-kit', ['push'], url)).toContain('No changes detected');

          expect(await tablesIn(url, 'public')).toEqual(APP_TABLES);
          expect(await tablesIn(url, 'hermes')).toEqual(OUR_TABLES_IN_HERMES);
          expect(await searchStructures(url, 'hermes')).toEqual(INTACT);
          const hits = lastJson<Array<{ sessionId: string }>>(
            await mustRun('tsx', ['src/store-tool.ts', 'search', 'healthcheck'], url),
          );
          expect(hits.map((hit) => hit.sessionId)).toEqual([sessionId, sessionId]);
        },
        STEP_TIMEOUT,
      );

      it(
        'default layout (public): push with the documented tablesFilter keeps every search structure',
        async () => {
          const url = await h.freshUrl();
          if (h.name === 'postgres') {
            // Our migrations applied by drizzle-kit: the store then finds its history complete.
            await mustRun('drizzle-kit', ['migrate', '--config', 'drizzle.hermes.config.ts'], url);
            expect(await tablesIn(url, 'public')).toEqual(OUR_TABLES);
          }
          const status = lastJson<{ pending: string[]; unknownHashes: string[] }>(
            await mustRun('tsx', ['src/store-tool.ts', 'status', '--default-layout'], url),
          );
          expect(status).toMatchObject({ pending: [], unknownHashes: [] });
          // The store's history in its own schema, whichever tool applied the migrations; no drizzle.__drizzle_migrations.
          expect(await tablesIn(url, 'hermes_sessiondb')).toEqual(['__hermes_sessiondb_migrations']);
          expect(await tablesIn(url, 'drizzle')).toEqual([]);
          const { sessionId } = lastJson<{ sessionId: string }>(
            await mustRun('tsx', ['src/store-tool.ts', 'seed', '--default-layout'], url),
          );

          const push = await inApp(
            'drizzle-kit',
            ['push', '--force', '--config', 'drizzle.default-layout.config.ts'],
            url,
          );
          expect(push.stdout).toContain('CREATE TABLE "app_notes"');
          expect(push.stdout).not.toMatch(/DROP (TABLE|COLUMN|INDEX)|ALTER TABLE "(messages|sessions)"/);
          // The caveat docs/drizzle-app.md gives for this layout: tablesFilter does not cover sequences (drizzle-orm#3320), so push also
          // plans dropping our identity sequence; Postgres refuses (the column needs it) and push stops there, exit 0.
          // When drizzle-kit fixes that, this fails: drop the caveat from docs/drizzle-app.md.
          expect(push.stdout + push.stderr).toContain('DROP SEQUENCE "public"."messages_id_seq"');
          expect(push.code).toBe(0);

          expect(await tablesIn(url, 'public')).toEqual(['app_notes', ...OUR_TABLES].sort());
          expect(await searchStructures(url, 'public')).toEqual(INTACT);
          const hits = lastJson<Array<{ sessionId: string }>>(
            await mustRun('tsx', ['src/store-tool.ts', 'search', 'healthcheck', '--default-layout'], url),
          );
          expect(hits.map((hit) => hit.sessionId)).toEqual([sessionId, sessionId]);

          // What the filter prevents, shown on this throwaway database: the same push without it drops every table
          // of the store (and reports success).
          const unfiltered = await mustRun(
            'drizzle-kit',
            [
              'push',
              '--force',
              '--dialect=postgresql',
              '--schema=./src/schema/notes.ts',
              ...(h.name === 'pglite' ? ['--driver=pglite', `--url=${url.slice('pglite:'.length)}`] : [`--url=${url}`]),
            ],
            url,
          );
          expect(unfiltered).toContain('Changes applied');
          expect(await tablesIn(url, 'public')).toEqual(['app_notes']);
          // The store's history (schema hermes_sessiondb) still says every migration is applied: opening names what is gone.
          const reopened = await inApp('tsx', ['src/store-tool.ts', 'status', '--default-layout'], url);
          expect(reopened.code).not.toBe(0);
          expect(reopened.stderr).toContain('MISSING_SEARCH_STRUCTURES');
        },
        STEP_TIMEOUT,
      );
    },
  );
}
