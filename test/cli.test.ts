/**
 * The operator's CLI, run in-process against real stores (an SQLite file, and Postgres when reachable), and as
 * a process where the entry point itself matters (--version, the default store in the working directory).
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import postgres from 'postgres';
import { afterAll, describe, expect, it } from 'vitest';
import { main } from '../src/cli/main.js';
import { openStore } from '../src/index.js';
import { type Harness, pgliteHarness, postgresHarness, reportAvailability, sqliteFileHarness } from './backends.js';
import { sharedFixture } from './helpers/fixtures.js';
import { HERMES_V11_DDL } from './helpers/hermes-schema.js';
import { TestClock } from './helpers/store-fixture.js';

const fixture = sharedFixture('hermes-v11-small.db');

async function run(...argv: string[]) {
  let out = '';
  let err = '';
  const code = await main(argv, { out: (t) => (out += t), err: (t) => (err += t) });
  return { code, out, err };
}

const harnesses: Harness[] = [sqliteFileHarness(), await postgresHarness()];

for (const h of harnesses) {
  const available = reportAvailability(h);
  describe.skipIf(!available)(`CLI [${h.name}]${available ? '' : ` (skipped: ${h.unavailable})`}`, () => {
    afterAll(() => h.cleanup());

    async function seeded(): Promise<string> {
      const url = await h.freshUrl();
      const clock = new TestClock();
      const store = await openStore(url, { clock: clock.now });
      clock.set(TestClock.START - 200 * 86400);
      await store.createSession('old', 'cron', { model: 'm-small' });
      await store.appendMessage('old', 'user', 'nightly docker cleanup');
      await store.updateTokenCounts('old', { inputTokens: 10, outputTokens: 2, estimatedCostUsd: 0.5 });
      await store.endSession('old', 'done');
      clock.reset();
      await store.createSession('new', 'cli', { model: 'm-big', modelConfig: { temperature: 0.2 } });
      await store.appendMessage('new', 'user', [{ type: 'text', text: 'deploy with docker?' }]);
      await store.appendMessage('new', 'assistant', 'yes', {
        reasoningDetails: [{ type: 'summary' }],
        toolCalls: [{ id: 'c1' }],
      });
      await store.updateTokenCounts('new', { inputTokens: 100, outputTokens: 20, estimatedCostUsd: 1.25 });
      await store.close();
      return url;
    }

    it.skipIf(fixture.missing !== undefined)(
      `imports a Hermes state.db with a closing summary${fixture.missing ? ` (skipped: ${fixture.missing})` : ''}`,
      async () => {
        const url = await h.freshUrl();
        const { code, out } = await run('import', fixture.path!, '--to', url);
        expect(code).toBe(0);
        expect(out).toMatch(
          /^Imported 60 sessions, 305 messages in [\d.]+ s \([\d,]+ msg\/s\) into .*; verified \(\d+ search spot-checks?\)\.\n$/,
        );
        expect(JSON.parse((await run('stats', '--db', url, '--json')).out)).toMatchObject({
          sessions: 60,
          messages: 305,
        });
        expect((await run('import', '/no/such/state.db', '--to', url)).code).toBe(1);
      },
    );

    it.skipIf(fixture.missing !== undefined)(
      `exits 1 when the store does not match the file after a merge that kept the store's rows${fixture.missing ? ` (skipped: ${fixture.missing})` : ''}`,
      async () => {
        const url = await h.freshUrl();
        const store = await openStore(url);
        await store.createSession('20260604_000000_1da3a1', 'mine');
        await store.close();
        const refused = await run('import', fixture.path!, '--to', url);
        expect(refused.code).toBe(2);
        expect(refused.err).toMatch(/already holds different data.*--merge keep-target/s);
        const merged = await run('import', fixture.path!, '--to', url, '--merge', 'keep-target');
        expect(merged.code).toBe(1);
        expect(merged.out).toMatch(
          /; VERIFICATION FAILED:\n {2}session 20260604_000000_1da3a1: source, model, .* differ\n/,
        );
        expect((await run('import', fixture.path!, '--to', url, '--merge', 'keep-target', '--no-verify')).out).toMatch(
          /\(not verified\)\n$/,
        );
      },
    );

    it('migrates, then reports that the store is up to date', async () => {
      const url = await h.freshUrl();
      const first = await run('migrate', '--db', url);
      expect(first.code).toBe(0);
      expect(first.out).toMatch(/applied 0000_/);
      const again = await run('migrate', '--db', url);
      expect(again.out).toMatch(/up to date/);
      expect((await run('status', '--db', url)).out).toMatch(/pending: none/);
    });

    it('searches with filters, as text or JSON lines', async () => {
      const url = await seeded();
      const text = await run('search', 'docker', '--db', url);
      expect(text.code).toBe(0);
      expect(text.out).toMatch(/2 results/);
      const json = await run('search', 'docker', '--db', url, '--source', 'cron', '--json');
      const hits = json.out
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as { sessionId: string });
      expect(hits.map((h) => h.sessionId)).toEqual(['old']);
      expect(
        (await run('search', 'docker', '--db', url, '--exclude-source', 'cron', '--json')).out.trim().split('\n'),
      ).toHaveLength(1);
    });

    it('reports counts, tokens and cost by model and source', async () => {
      const url = await seeded();
      const { code, out } = await run('stats', '--db', url, '--json');
      expect(code).toBe(0);
      const stats = JSON.parse(out);
      expect(stats).toMatchObject({ sessions: 2, messages: 3 });
      expect(stats.databaseBytes).toBeGreaterThan(0);
      const big = stats.byModel.find((g: { key: string }) => g.key === 'm-big');
      expect(big).toMatchObject({
        sessions: 1,
        messages: 2,
        inputTokens: 100,
        outputTokens: 20,
        estimatedCostUsd: 1.25,
      });
      expect(stats.bySource.map((g: { key: string }) => g.key).sort()).toEqual(['cli', 'cron']);
      expect((await run('stats', '--db', url)).out).toMatch(/sessions 2, messages 3/);
    });

    it("exports JSON lines in Hermes' export_session shape", async () => {
      const url = await seeded();
      const { code, out, err } = await run('export', '--db', url);
      expect(code).toBe(0);
      expect(err).toMatch(/exported 2 sessions/);
      const sessions = out
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l));
      expect(sessions.map((s: { id: string }) => s.id)).toEqual(['new', 'old']);
      const exported = sessions[0];
      expect(exported).toMatchObject({
        id: 'new',
        source: 'cli',
        model_config: '{"temperature": 0.2}',
        input_tokens: 100,
      });
      expect(exported.messages[0]).toMatchObject({
        session_id: 'new',
        role: 'user',
        content: [{ type: 'text', text: 'deploy with docker?' }],
      });
      expect(exported.messages[1]).toMatchObject({
        tool_calls: [{ id: 'c1' }],
        reasoning_details: '[{"type": "summary"}]',
      });
      const one = await run('export', '--db', url, '--session', 'old');
      expect(one.out.trim().split('\n')).toHaveLength(1);
      expect((await run('export', '--db', url, '--session', 'nope')).code).toBe(2);
    });

    it('prunes old ended sessions, with a dry run that deletes nothing', async () => {
      const url = await seeded();
      const dry = await run('prune', '--older-than', '90', '--db', url, '--dry-run');
      expect(dry.out).toMatch(/would prune 1 session/);
      expect(JSON.parse((await run('stats', '--db', url, '--json')).out).sessions).toBe(2);
      expect((await run('prune', '--older-than', '90', '--db', url, '--source', 'cli')).out).toMatch(
        /pruned 0 sessions/,
      );
      expect((await run('prune', '--older-than', '90', '--db', url)).out).toMatch(/pruned 1 session/);
      expect(JSON.parse((await run('stats', '--db', url, '--json')).out).sessions).toBe(1);
    });
  });
}

describe('CLI usage and failures', () => {
  it('exits 2 on usage errors and 1 on a store it cannot open, naming the URL without its password', async () => {
    expect((await run()).code).toBe(2);
    expect((await run('bogus')).code).toBe(2);
    expect((await run('prune')).code).toBe(2);
    expect((await run('prune', '--older-than', 'soon')).code).toBe(2);
    expect((await run('search', 'x', '--limit', '-3')).code).toBe(2);
    expect((await run('search', 'x', '--db', 'mongodb://h/db')).code).toBe(2);
    const unreachable = await run('stats', '--db', 'postgres://alice:s3cr3t@127.0.0.1:1/app');
    expect(unreachable.code).toBe(1);
    expect(unreachable.err).toContain('postgres://alice:***@127.0.0.1:1/app');
    expect(unreachable.err).not.toContain('s3cr3t');
    const help = await run('--help');
    expect(help.code).toBe(0);
    expect(help.out).toMatch(/migrate/);
  });
});

const packageJson = JSON.parse(fs.readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
  version: string;
};
const mainScript = fileURLToPath(new URL('../src/cli/main.ts', import.meta.url));

/** The CLI as a process under tsx (resolved from here, so `cwd` may be anywhere). */
function runProcess(args: string[], cwd = process.cwd()) {
  const child = spawnSync(process.execPath, ['--import', import.meta.resolve('tsx'), mainScript, ...args], {
    cwd,
    encoding: 'utf8',
    timeout: 60_000,
  });
  return { code: child.status, out: child.stdout, err: child.stderr };
}

const scratch = () => fs.mkdtempSync(path.join(os.tmpdir(), 'hsdb-cli-'));

describe('CLI --version', () => {
  it("prints package.json's version, with --version and -V", async () => {
    for (const flag of ['--version', '-V']) {
      expect(await run(flag)).toEqual({ code: 0, out: `${packageJson.version}\n`, err: '' });
    }
  });

  it('prints it from the entry point run as a process', () => {
    const child = runProcess(['--version']);
    expect(child).toMatchObject({ code: 0, out: `${packageJson.version}\n` });
  });
});

/** Each command that only reads, with the store under test put where `--db` / `--to` / `--from` go. */
const readOnlyCommands = (url: string, existing: string): Array<[string, string[]]> => [
  ['stats', ['stats', '--db', url]],
  ['export', ['export', '--db', url, '--session', 'nope']],
  ['search', ['search', 'docker', '--db', url]],
  ['status', ['status', '--db', url]],
  ['verify --to', ['verify', '--from', existing, '--to', url]],
  ['verify --from', ['verify', '--from', url, '--to', existing]],
];

describe('CLI commands that only read never create or migrate a database', () => {
  const dirs: string[] = [];
  afterAll(() => {
    for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
  });
  const dir = () => {
    const d = scratch();
    dirs.push(d);
    return d;
  };
  async function existingStore(): Promise<string> {
    const url = `sqlite:${path.join(dir(), 'existing.db')}`;
    await (await openStore(url)).close();
    return url;
  }

  it('refuses a missing SQLite file with exit 1, naming it, and does not create it', async () => {
    const existing = await existingStore();
    for (const [name, argv] of readOnlyCommands(`sqlite:${path.join(dir(), 'missing.db')}`, existing)) {
      const file = argv.find((a) => a.startsWith('sqlite:') && a.endsWith('missing.db'))!.slice('sqlite:'.length);
      const result = await run(...argv);
      expect(result.code, name).toBe(1);
      expect(result.err, name).toContain(file);
      expect(fs.readdirSync(path.dirname(file)), name).toEqual([]);
    }
  });

  it('prune (which writes) refuses a missing SQLite file the same way instead of creating a store to prune', async () => {
    const file = path.join(dir(), 'missing.db');
    for (const argv of [
      ['prune', '--db', `sqlite:${file}`, '--older-than', '30'],
      ['prune', '--db', `sqlite:${file}`, '--older-than', '30', '--dry-run'],
    ]) {
      const result = await run(...argv);
      expect(result.code, argv.join(' ')).toBe(1);
      expect(result.err).toContain(file);
      expect(fs.existsSync(file)).toBe(false);
    }
    const existing = await existingStore();
    expect((await run('prune', '--db', existing, '--older-than', '30')).out).toBe('pruned 0 sessions\n');
  });

  it('refuses a missing PGlite directory, and an empty one, with exit 1 naming it, and creates nothing', async () => {
    const existing = await existingStore();
    const parent = dir();
    const missing = path.join(parent, 'pgdata');
    const empty = path.join(parent, 'empty');
    fs.mkdirSync(empty);
    for (const [name, argv] of [
      ...readOnlyCommands(`pglite:${missing}`, existing),
      ...readOnlyCommands(`pglite:${empty}`, existing),
    ]) {
      const target = argv.find((a) => a.startsWith('pglite:'))!.slice('pglite:'.length);
      const result = await run(...argv);
      expect(result.code, `${name} ${target}`).toBe(1);
      expect(result.err, `${name} ${target}`).toContain(target);
      expect(fs.readdirSync(parent).sort(), `${name} ${target}`).toEqual(['empty']);
      expect(fs.readdirSync(empty), `${name} ${target}`).toEqual([]);
    }
  });

  it('does not create the default store in the working directory (export --session with no --db)', () => {
    const cwd = dir();
    const child = runProcess(['export', '--session', 'nope'], cwd);
    expect(child.code).toBe(1);
    expect(child.err).toContain(path.join(fs.realpathSync(cwd), 'hermes-sessiondb.db'));
    expect(fs.readdirSync(cwd)).toEqual([]);
  });

  it('refuses a store with pending migrations, saying to run migrate first, and leaves it unmigrated; status reports them', async () => {
    const file = path.join(dir(), 'old.db');
    const url = `sqlite:${file}`;
    const older = sqliteFolderWithFirst(1);
    await (await openStore(url, { migrationsFolder: older.folder })).close();
    const existing = await existingStore();
    for (const [name, argv] of readOnlyCommands(url, existing).filter(
      ([n]) => n !== 'status' && n !== 'verify --from',
    )) {
      const result = await run(...argv);
      expect(result.code, name).toBe(1);
      expect(result.err, name).toMatch(/pending migration.*run `hermes-sessiondb migrate --db sqlite:.*old\.db` first/);
    }
    const status = await run('status', '--db', url);
    expect(status.code).toBe(0);
    expect(status.out).toContain(`applied: ${older.tags.join(', ')}\n`);
    expect(status.out).toMatch(/pending: 0001_/);
    const store = await openStore(url, { migrate: false, readonly: true });
    expect((await store.migrationStatus()).applied).toEqual(older.tags);
    await store.close();
  });

  it('refuses an existing SQLite file that holds no store (no migration history), and writes nothing to it', async () => {
    const file = path.join(dir(), 'blank.db');
    fs.writeFileSync(file, '');
    const result = await run('stats', '--db', file);
    expect(result.code).toBe(1);
    expect(result.err).toMatch(/holds no hermes-sessiondb store.*hermes-sessiondb migrate --db/);
    expect(fs.statSync(file).size).toBe(0);
  });
});

/** A copy of the shipped SQLite migrations keeping only the first `count`: a store an older version left. */
function sqliteFolderWithFirst(count: number): { folder: string; tags: string[] } {
  const shipped = fileURLToPath(new URL('../drizzle/sqlite', import.meta.url));
  const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'hsdb-migrations-sqlite-first-'));
  fs.cpSync(shipped, folder, { recursive: true });
  const journalFile = path.join(folder, 'meta', '_journal.json');
  const journal = JSON.parse(fs.readFileSync(journalFile, 'utf8')) as { entries: Array<{ tag: string }> };
  for (const e of journal.entries.slice(count)) fs.rmSync(path.join(folder, `${e.tag}.sql`));
  journal.entries = journal.entries.slice(0, count);
  fs.writeFileSync(journalFile, JSON.stringify(journal, null, 2));
  return { folder, tags: journal.entries.map((e) => e.tag) };
}

const pg = await postgresHarness();
const pgAvailable = reportAvailability(pg);
describe.skipIf(!pgAvailable)(
  `CLI on an empty Postgres database${pgAvailable ? '' : ` (skipped: ${pg.unavailable})`}`,
  () => {
    afterAll(() => pg.cleanup());

    /** Relations and schemas beyond what CREATE DATABASE gives. */
    async function userObjects(url: string): Promise<{ relations: string[]; schemas: string[] }> {
      const sql = postgres(url, { max: 1, onnotice: () => {} });
      try {
        const relations = await sql<
          { name: string }[]
        >`SELECT n.nspname || '.' || c.relname AS name FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname NOT LIKE 'pg_toast%'`;
        const schemas = await sql<{ name: string }[]>`SELECT nspname AS name FROM pg_namespace
        WHERE nspname NOT IN ('pg_catalog', 'information_schema', 'public') AND nspname NOT LIKE 'pg_toast%' AND nspname NOT LIKE 'pg_temp%'`;
        return { relations: relations.map((r) => r.name), schemas: schemas.map((r) => r.name) };
      } finally {
        await sql.end({ timeout: 5 });
      }
    }

    it('stats, search and export exit 1 saying to migrate first, and the database stays empty', async () => {
      const url = await pg.freshUrl();
      for (const argv of [
        ['stats', '--db', url],
        ['search', 'x', '--db', url],
        ['export', '--db', url],
      ]) {
        const result = await run(...argv);
        expect(result.code, argv[0]).toBe(1);
        expect(result.err, argv[0]).toMatch(
          /holds no hermes-sessiondb store.*run `hermes-sessiondb migrate --db postgres:\/\/.*` first/,
        );
      }
      expect(await userObjects(url)).toEqual({ relations: [], schemas: [] });
    });

    it('status reports every migration pending and creates nothing', async () => {
      const url = await pg.freshUrl();
      const result = await run('status', '--db', url);
      expect(result.code).toBe(0);
      expect(result.out).toMatch(/applied: none\n {2}pending: 0000_/);
      expect(await userObjects(url)).toEqual({ relations: [], schemas: [] });
    });

    it('copy from it exits 1 and creates no target', async () => {
      const url = await pg.freshUrl();
      const target = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'hsdb-cli-')), 'target.db');
      const result = await run('copy', '--from', url, '--to', `sqlite:${target}`);
      expect(result.code).toBe(1);
      expect(result.err).toContain(new URL(url).pathname.slice(1));
      expect(fs.existsSync(target)).toBe(false);
      fs.rmSync(path.dirname(target), { recursive: true, force: true });
    });

    it('never prints the password of the URL it refuses', async () => {
      const url = new URL(await pg.freshUrl());
      url.password = 's3cr3t-pw'; // trust auth: the server does not ask for it
      const result = await run('stats', '--db', url.toString());
      expect(result.code).toBe(1);
      expect(result.err).toContain('***');
      expect(result.err).not.toContain('s3cr3t-pw');
    });
  },
);

describe('CLI with a missing source: exit 1 for import and copy alike, and the target is not created', () => {
  const pglite = pgliteHarness();
  const sqlite = sqliteFileHarness();
  afterAll(async () => {
    await pglite.cleanup();
    await sqlite.cleanup();
  });

  it.each(['sqlite', 'pglite'] as const)('into a %s target', async (kind) => {
    const target = await (kind === 'sqlite' ? sqlite : pglite).freshUrl();
    const targetPath = target.replace(/^(sqlite|pglite):/, '');
    const parent = scratch();
    const cases: Array<[string, string[], string]> = [
      [
        'import',
        ['import', path.join(parent, 'missing-state.db'), '--to', target],
        path.join(parent, 'missing-state.db'),
      ],
      [
        'copy sqlite',
        ['copy', '--from', `sqlite:${path.join(parent, 'nope.db')}`, '--to', target],
        path.join(parent, 'nope.db'),
      ],
      [
        'copy pglite',
        ['copy', '--from', `pglite:${path.join(parent, 'nope')}`, '--to', target],
        path.join(parent, 'nope'),
      ],
    ];
    for (const [name, argv, missing] of cases) {
      const result = await run(...argv);
      expect(result.code, name).toBe(1);
      expect(result.err, name).toContain(missing);
      expect(fs.existsSync(targetPath), name).toBe(false);
      expect(fs.readdirSync(parent), name).toEqual([]);
    }
    fs.rmSync(parent, { recursive: true, force: true });
  });
});

/** A small Hermes v11 state.db (the fixture-free path through import, verify --from and copy's refusal). */
function hermesFile(file: string): string {
  const db = new Database(file);
  db.exec(HERMES_V11_DDL);
  db.prepare("INSERT INTO sessions (id, source, started_at) VALUES ('h1', 'cli', 1700000000)").run();
  db.prepare(
    "INSERT INTO messages (session_id, role, content, timestamp) VALUES ('h1', 'user', 'docker compose up', 1700000001)",
  ).run();
  db.close();
  return file;
}

describe('CLI with a Hermes state.db as the source', () => {
  const dirs: string[] = [];
  afterAll(() => {
    for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
  });
  const dir = () => {
    const d = scratch();
    dirs.push(d);
    return d;
  };

  it('imports it (the snapshot taken before the target is opened), verifies it, and verify --from reads it', async () => {
    const parent = dir();
    const source = hermesFile(path.join(parent, 'state.db'));
    const target = `sqlite:${path.join(parent, 'store.db')}`;
    const imported = await run('import', source, '--to', target);
    expect(imported.err).not.toMatch(/error/);
    expect(imported.code).toBe(0);
    expect(imported.out).toMatch(/^Imported 1 sessions, 1 messages in .*; verified/);
    const verified = await run('verify', '--from', source, '--to', target);
    expect(verified.code).toBe(0);
    expect(verified.out).toMatch(/verified: the stores agree/);
  });

  it('copy refuses it as a source, pointing to import, and creates no target', async () => {
    const parent = dir();
    const source = hermesFile(path.join(parent, 'state.db'));
    const target = path.join(parent, 'store.db');
    const refused = await run('copy', '--from', `sqlite:${source}`, '--to', `sqlite:${target}`);
    expect(refused.code).toBe(2);
    expect(refused.err).toMatch(/is a Hermes state\.db, not a store; use: hermes-sessiondb import/);
    expect(fs.existsSync(target)).toBe(false);
  });

  it('import of a file that is not a Hermes state.db refuses before creating the target', async () => {
    const parent = dir();
    const notHermes = path.join(parent, 'other.db');
    new Database(notHermes).exec('CREATE TABLE t (x)');
    const target = path.join(parent, 'store.db');
    const refused = await run('import', notHermes, '--to', `sqlite:${target}`);
    expect(refused.code).toBe(2);
    expect(refused.err).toMatch(/no "sessions" table/);
    expect(fs.existsSync(target)).toBe(false);
  });
});

const pgForSchemas = await postgresHarness();
const pgForSchemasAvailable = reportAvailability(pgForSchemas);

describe('CLI --schema: a store in its own Postgres schema is reached by every command', () => {
  const parent = scratch();
  afterAll(async () => {
    fs.rmSync(parent, { recursive: true, force: true });
    await pgForSchemas.cleanup();
  });

  it('stats, search, export, status, migrate and prune see the store in the schema, and only there; copy and verify take a schema per side', async () => {
    const url = `pglite:${path.join(parent, 'pgdata')}`;
    const store = await openStore(url, { schema: 'hermes' });
    await store.createSession('s1', 'cli');
    await store.appendMessage('s1', 'user', 'deploy the platypus with docker');
    await store.close();

    const stats = await run('stats', '--db', url, '--schema', 'hermes', '--json');
    expect(stats.code, stats.err).toBe(0);
    expect(JSON.parse(stats.out)).toMatchObject({ sessions: 1, messages: 1 });
    const search = await run('search', 'platypus', '--db', url, '--schema', 'hermes', '--json');
    expect(search.code, search.err).toBe(0);
    expect(search.out).toContain('s1');
    expect((await run('status', '--db', url, '--schema', 'hermes')).out).toContain('pending: none');
    expect((await run('migrate', '--db', url, '--schema', 'hermes')).out).toContain('up to date');
    expect((await run('export', '--db', url, '--schema', 'hermes', '--session', 's1')).out).toContain('platypus');
    expect((await run('prune', '--db', url, '--schema', 'hermes', '--older-than', '30', '--dry-run')).code).toBe(0);

    // Without the flag the default layout is meant, and there is no store there: refused, nothing created.
    const wrong = await run('stats', '--db', url);
    expect(wrong.code).toBe(1);
    expect(wrong.err).toContain('migrate');

    const copy = path.join(parent, 'copy.db');
    const copied = await run('copy', '--from', url, '--from-schema', 'hermes', '--to', `sqlite:${copy}`);
    expect(copied.code, copied.err).toBe(0);
    const back = await run('verify', '--from', `sqlite:${copy}`, '--to', url, '--to-schema', 'hermes');
    expect(back.code, back.out + back.err).toBe(0);
    expect(back.out).toContain('verified');
  });

  it.skipIf(!pgForSchemasAvailable)(
    `copies between two schemas of one Postgres database (not "the same store")${pgForSchemasAvailable ? '' : ` (skipped: ${pgForSchemas.unavailable})`}`,
    async () => {
      const url = await pgForSchemas.freshUrl();
      const store = await openStore(url, { schema: 'hermes' });
      await store.createSession('s1', 'cli');
      await store.appendMessage('s1', 'user', 'deploy the platypus with docker');
      await store.close();
      const same = await run('copy', '--from', url, '--to', url, '--schema', 'hermes');
      expect(same.code).toBe(2);
      const twin = await run('copy', '--from', url, '--from-schema', 'hermes', '--to', url, '--to-schema', 'twin');
      expect(twin.code, twin.err).toBe(0);
      expect(JSON.parse((await run('stats', '--db', url, '--schema', 'twin', '--json')).out).sessions).toBe(1);
      expect(JSON.parse((await run('stats', '--db', url, '--schema', 'hermes', '--json')).out).sessions).toBe(1);
    },
  );

  it('refuses --schema for an SQLite store (exit 2) instead of quietly reading another store', async () => {
    const file = path.join(parent, 'plain.db');
    const result = await run('stats', '--db', `sqlite:${file}`, '--schema', 'hermes');
    expect(result.code).toBe(2);
    expect(result.err).toContain('no schemas');
    expect(fs.existsSync(file)).toBe(false);
  });
});
