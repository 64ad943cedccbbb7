/**
 * postgres.js options passed through for a pool opened from a postgres:// URL: `ssl` in postgres.js' own
 * forms, and `statementTimeoutMs` as statement_timeout in the startup message (migrations exempt).
 */
import { sql } from 'drizzle-orm';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConnectionError, openStore } from '../../src/index.js';
import type { PgBackend } from '../../src/db/pg/backend.js';
import { rowsOf } from '../../src/db/pg/open.js';
import { folderWith, latestWhen } from '../helpers/migration-folders.js';
import { DATABASE_URL, type Harness, postgresHarness, reportAvailability } from '../backends.js';

/** The fresh database's URL with a password added (trust auth ignores it), to prove errors do not carry it. */
function withPassword(url: string, password: string): string {
  const u = new URL(url);
  u.password = password;
  return u.toString();
}

describe('postgres:// pool options (real Postgres)', () => {
  let harness: Harness;
  let available = false;
  let serverSsl = 'unknown';
  beforeAll(async () => {
    harness = await postgresHarness();
    available = reportAvailability(harness);
    if (!available) return;
    const admin = postgres(DATABASE_URL, { max: 1, onnotice: () => {} });
    try {
      serverSsl = String((await admin`SHOW ssl`)[0]?.ssl);
    } finally {
      await admin.end({ timeout: 5 });
    }
  });
  afterAll(async () => {
    await harness?.cleanup();
  });

  it("ssl: 'prefer' and false open the store; 'require' works only when the server has SSL, and its error hides the password", async (ctx) => {
    if (!available) ctx.skip('no Postgres server (see the warning above)');
    const url = withPassword(await harness.freshUrl(), 'pa55-w0rd-secret');
    for (const ssl of ['prefer', false] as const) {
      const store = await openStore(url, { ssl, connectTimeoutSeconds: 5 });
      await store.createSession(`s-${String(ssl)}`, 'cli');
      await store.close();
    }
    if (serverSsl === 'on') {
      const store = await openStore(url, { ssl: 'require', connectTimeoutSeconds: 5 });
      expect((await store.getSession('s-prefer'))?.source).toBe('cli');
      await store.close();
    } else {
      // This server has no SSL (SHOW ssl = off): requiring it must fail as a ConnectionError.
      expect(serverSsl).toBe('off');
      const error = await openStore(url, { ssl: 'require', connectTimeoutSeconds: 5 }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ConnectionError);
      const text = `${(error as Error).message}\n${(error as Error).stack}\n${String((error as Error).cause)}`;
      expect(text).toMatch(/TLS|SSL/i);
      expect(text).not.toContain('pa55-w0rd-secret');
      expect((error as ConnectionError).url).toContain(':***@');
    }
  });

  it('statementTimeoutMs reaches the server, stops a long statement, and does not apply to migrations', async (ctx) => {
    if (!available) ctx.skip('no Postgres server (see the warning above)');
    const url = await harness.freshUrl();
    // Opening migrates a fresh database under this timeout (the migrator lifts it for its transaction).
    const store = await openStore(url, { statementTimeoutMs: 1234 });
    const pg = store.backend as PgBackend;
    expect(rowsOf(await pg.execute(sql`SHOW statement_timeout`))).toEqual([{ statement_timeout: '1234ms' }]);
    // A statement well past the limit is cancelled by the server (57014: query_canceled); execute() runs it
    // through postgres.js directly (prepared), so the error is the driver's own.
    await expect(pg.execute(sql`SELECT pg_sleep(30)`)).rejects.toMatchObject({ code: '57014' });
    expect(await store.migrationStatus()).toMatchObject({ pending: [] });
    await store.close();

    // A migration that runs longer than the timeout still completes: the migrator lifts it for its transaction.
    const slow = folderWith('pg', [
      { tag: '9000_slow_migration', when: latestWhen('pg') + 1, sql: 'SELECT pg_sleep(1.5);' },
    ]);
    const migrating = await openStore(url, { statementTimeoutMs: 300, migrationsFolder: slow });
    expect(await migrating.migrationStatus()).toMatchObject({ pending: [] });
    expect(await migrating.getSession('nope')).toBeNull();
    await migrating.close();
  });
});
