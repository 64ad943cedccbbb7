/**
 * A Postgres store: a server URL or the app's postgres.js client, a PGlite URL or the app's PGlite instance.
 * Loaded when one is opened; PGlite's WASM package only when a PGlite one is.
 */
import { DEFAULT_SCHEMA } from '../../sql/tables.js';
import { SessionStore } from '../../store.js';
import type { OpenRequest, OpenedStore, ParsedOpenOptions } from '../engine.js';
import { defaultMigrationsFolder } from '../migrations.js';
import { redactUrl } from '../url.js';
import { PgBackend } from './backend.js';
import { PgRunner } from './runner.js';
import { PgSpelling } from './spelling.js';
import { type PgClientTarget, type PgLocation, pgEngine } from './engine.js';
import { type OpenedPg, adoptPostgres, openPostgres } from './open.js';

export async function openPgStore(
  request: OpenRequest<PgLocation, PgClientTarget>,
  opts: ParsedOpenOptions,
  clock: () => number,
): Promise<OpenedStore> {
  const schema = opts.schema ?? DEFAULT_SCHEMA;
  let url: string;
  let driver: 'postgres' | 'pglite';
  let opened: OpenedPg;
  const { client, location } = request;
  if (client?.kind === 'postgres') {
    url = pgEngine.describeClient(client);
    driver = 'postgres';
    opened = await adoptPostgres(client.client, url, schema);
  } else if (client?.kind === 'pglite') {
    url = pgEngine.describeClient(client);
    driver = 'pglite';
    // Loaded on demand: the WASM package stays out of SQLite and server users' processes.
    const { adoptPglite } = await import('./pglite.js');
    opened = await adoptPglite(client.client, url, schema);
  } else if (location?.backend === 'postgres') {
    url = redactUrl(location.url);
    driver = 'postgres';
    opened = await openPostgres(location.url, {
      poolSize: opts.poolSize,
      connectTimeoutSeconds: opts.connectTimeoutSeconds,
      ssl: opts.ssl,
      statementTimeoutMs: opts.statementTimeoutMs,
      schema,
    });
  } else {
    const dataDir = location?.backend === 'pglite' ? location.dataDir : null;
    url = dataDir === null ? 'pglite:memory' : `pglite:${dataDir}`;
    driver = 'pglite';
    const { openPglite } = await import('./pglite.js');
    opened = await openPglite(dataDir, schema);
  }
  const pg = new PgBackend({
    url,
    driver,
    opened,
    migrationsFolder: opts.migrationsFolder ?? defaultMigrationsFolder('pg'),
    schema,
  });
  const spelling = new PgSpelling(pg.names);
  const dialect = { spelling, runner: new PgRunner(pg, spelling) };
  return {
    backend: pg,
    store: new SessionStore<'pg'>(pg, dialect, clock, opts.searchRankWindow),
  };
}
