/**
 * PGlite (embedded Postgres in WASM). This module is only loaded (import()) when a PGlite store is opened,
 * so SQLite and server users never load the WASM package.
 */
import { type PGlite, types } from '@electric-sql/pglite';
import { PgDialect as DrizzlePgCompiler } from 'drizzle-orm/pg-core';
import type { PgliteClient } from './engine.js';
import { drizzle as drizzlePglite } from 'drizzle-orm/pglite';
import { ConnectionError } from '../../errors.js';
import { hermesPgTables } from '../../schema/pg.js';
import { type OpenedPg, type PgDb, describePgError, postgresSessionSettings, rowsOf } from './open.js';
import { type DataDirLock, lockDataDir } from './pglite-lock.js';
import { PgliteThread } from './pglite-thread.js';

/** What the store calls on PGlite: an instance on this thread (an app's), or one on a worker thread (ours). */
type PgliteRunner = Pick<PGlite, 'query'> | PgliteThread;

/** PGlite has one session: the settings are set on it with set_config, right after it starts. */
async function applySessionSettings(client: PgliteRunner): Promise<void> {
  await client.query('SELECT set_config(key, value, false) FROM json_each_text($1)', [
    JSON.stringify(postgresSessionSettings),
  ]);
}

/** Time values as the server's text, as Drizzle's PGlite session reads them (codecs/time.ts parses them). */
const TEXT_TIMES = {
  [types.TIMESTAMP]: (value: string) => value,
  [types.TIMESTAMPTZ]: (value: string) => value,
  [types.INTERVAL]: (value: string) => value,
  [types.DATE]: (value: string) => value,
};
const compiler = new DrizzlePgCompiler();

function pgliteSession(client: PgliteRunner, close: () => Promise<void>, schema: string | undefined): OpenedPg {
  // Drizzle's PGlite driver calls query() and transaction(), which a PgliteThread answers as PGlite does.
  const db = drizzlePglite(client as PGlite, { schema: hermesPgTables(schema) }) as unknown as PgDb;
  return {
    db,
    execute: (query) => db.execute(query),
    // PGlite keeps no named statements: each query is parsed again, which costs no round trip in-process.
    statement: async (text, params) => (await client.query<Record<string, unknown>>(text, params as unknown[])).rows,
    values: async (query) => {
      const compiled = compiler.sqlToQuery(query);
      const result = await client.query<unknown[]>(compiled.sql, compiled.params, {
        rowMode: 'array',
        parsers: TEXT_TIMES,
      });
      return result.rows;
    },
    table: async (query) => {
      const compiled = compiler.sqlToQuery(query);
      const result = await client.query<unknown[]>(compiled.sql, compiled.params, {
        rowMode: 'array',
        parsers: TEXT_TIMES,
      });
      return { columns: result.fields.map((f) => f.name), rows: result.rows };
    },
    // One in-process connection: nothing can drop it, so Drizzle's transaction is the right tool.
    transaction: (body) => db.transaction((tx) => body(tx)),
    close,
  };
}

/**
 * Open a PGlite store of our own: its instance runs on a worker thread (see pglite-thread.ts), so no
 * statement, however long, holds up the event loop.
 */
export async function openPglite(dataDir: string | null, schema?: string): Promise<OpenedPg> {
  const where = dataDir === null ? 'pglite:memory' : `pglite:${dataDir}`;
  const lock = dataDir === null ? undefined : lockPgliteDataDir(where, dataDir);
  let client: PgliteThread | undefined;
  try {
    client = new PgliteThread(dataDir, where);
    await client.waitReady;
    await applySessionSettings(client);
  } catch (error) {
    await client?.close().catch(() => {});
    lock?.release();
    if (error instanceof ConnectionError) throw error;
    throw new ConnectionError(where, describePgError(error), { cause: error });
  }
  const opened = client;
  return pgliteSession(
    opened,
    async () => {
      try {
        await opened.close();
      } finally {
        lock?.release();
      }
    },
    schema,
  );
}

/**
 * Use an app's PGlite instance. The app owns it: no data-directory lock is taken (the app's instance is the
 * one owner) and close() leaves it open. Our session settings are set on it (PGlite has one session, so the
 * app's own queries see them too). Search needs pg_trgm, which PGlite only has when it was constructed with it.
 */
export async function adoptPglite(app: PgliteClient, where: string, schema?: string): Promise<OpenedPg> {
  // The engine recognised it by shape; it is a PGlite (of whichever copy of the package the app loaded).
  const client = app as unknown as PGlite;
  try {
    await client.waitReady;
    const [trgm] = rowsOf<{ installed: boolean; available: boolean }>(
      await client.query(
        `SELECT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'pg_trgm') AS installed,
                EXISTS (SELECT 1 FROM pg_available_extensions WHERE name = 'pg_trgm') AS available`,
      ),
    );
    // PGlite lists pg_trgm as available only when the instance was constructed with it (the migrations create it).
    if (!trgm?.installed && !trgm?.available) {
      throw new ConnectionError(
        where,
        'this PGlite instance has no pg_trgm extension, which search needs. Construct it with the extension: ' +
          "import { pg_trgm } from '@electric-sql/pglite/contrib/pg_trgm'; new PGlite(dataDir, { extensions: { pg_trgm } }).",
      );
    }
    await applySessionSettings(client);
  } catch (error) {
    if (error instanceof ConnectionError) throw error;
    throw new ConnectionError(where, describePgError(error), { cause: error });
  }
  return pgliteSession(client, async () => {}, schema);
}

/** The data directory's lock (see pglite-lock.ts), or a ConnectionError naming who holds it. */
function lockPgliteDataDir(where: string, dataDir: string): DataDirLock {
  try {
    return lockDataDir(dataDir);
  } catch (error) {
    throw new ConnectionError(where, error instanceof Error ? error.message : String(error), { cause: error });
  }
}
