/**
 * Each backend's driver is loaded only when a store of that kind is opened: importing the package and using
 * SQLite loads neither postgres.js nor PGlite (nor Drizzle's adapters for them), and the CLI's --version loads
 * no driver, no schema and no validation library. Observed in a child process with a module-resolution hook,
 * not inferred from the source; each list is checked to grow once the driver is used, so an empty one is not
 * a blind hook.
 */
import { fileURLToPath } from 'node:url';
import { afterAll, expect, it } from 'vitest';
import { type Harness, postgresHarness, reportAvailability } from './backends.js';
import { spawnTs, waitForLine } from './helpers/processes.js';

const POSTGRES_JS = ['postgres', 'drizzle-orm/postgres-js'];
const PGLITE = ['@electric-sql/pglite', 'drizzle-orm/pglite'];

let postgres: Harness | undefined;
afterAll(async () => postgres?.cleanup());

async function step(child: ReturnType<typeof spawnTs>, name: string): Promise<string[]> {
  const line = await waitForLine(child, (l) => l.includes(`"step":"${name}"`));
  return (JSON.parse(line) as { loaded: string[] }).loaded;
}

it('loads postgres.js only when a Postgres store is opened, PGlite only when a PGlite one is', async () => {
  postgres = await postgresHarness();
  const postgresUrl = reportAvailability(postgres) ? await postgres.freshUrl() : undefined;
  const entry = fileURLToPath(new URL('../src/index.ts', import.meta.url));
  const child = spawnTs('./module-load-probe.ts', ['store', entry, ...(postgresUrl ? [postgresUrl] : [])]);
  try {
    const afterImport = await step(child, 'import');
    for (const name of [...POSTGRES_JS, ...PGLITE]) expect(afterImport).not.toContain(name);

    const afterSqlite = await step(child, 'sqlite');
    for (const name of [...POSTGRES_JS, ...PGLITE]) expect(afterSqlite).not.toContain(name);
    expect(afterSqlite).toContain('better-sqlite3');

    const afterPglite = await step(child, 'pglite');
    for (const name of PGLITE) expect(afterPglite).toContain(name);
    for (const name of POSTGRES_JS) expect(afterPglite).not.toContain(name);

    if (postgresUrl) {
      const afterPostgres = await step(child, 'postgres');
      for (const name of POSTGRES_JS) expect(afterPostgres).toContain(name);
    }
  } finally {
    child.kill();
  }
}, 120_000);

it('runs the CLI --version without loading a driver, Drizzle or zod', async () => {
  const entry = fileURLToPath(new URL('../src/cli/main.ts', import.meta.url));
  const child = spawnTs('./module-load-probe.ts', ['cli', entry]);
  try {
    const version = JSON.parse(await waitForLine(child, (l) => l.includes('"step":"version"'))) as {
      code: number;
      out: string;
    };
    expect(version).toEqual({ step: 'version', code: 0, out: expect.stringMatching(/^\d+\.\d+\.\d+/) });
    const loaded = await step(child, 'cli');
    for (const name of [...POSTGRES_JS, ...PGLITE, 'better-sqlite3', 'drizzle-orm', 'zod'])
      expect(loaded).not.toContain(name);
    // The hook does see what the CLI loads.
    expect(loaded).toContain('commander');
  } finally {
    child.kill();
  }
}, 60_000);
