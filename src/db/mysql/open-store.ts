/** A MySQL/MariaDB store from its URL. Loaded (with mysql2) when one is opened. */
import { SessionStore } from '../../store.js';
import type { OpenRequest, OpenedStore, ParsedOpenOptions } from '../engine.js';
import { defaultMigrationsFolder } from '../migrations.js';
import { redactUrl } from '../url.js';
import { MysqlBackend } from './backend.js';
import { MysqlRunner } from './runner.js';
import { MysqlSpelling } from './spelling.js';
import type { MysqlLocation } from './engine.js';
import { openMysql } from './open.js';

export async function openMysqlStore(
  request: OpenRequest<MysqlLocation, never>,
  opts: ParsedOpenOptions,
  clock: () => number,
): Promise<OpenedStore> {
  const { location } = request as { location: MysqlLocation };
  const opened = await openMysql(location.url, {
    poolSize: opts.poolSize,
    connectTimeoutSeconds: opts.connectTimeoutSeconds,
  });
  const mysql = new MysqlBackend({
    url: redactUrl(location.url),
    opened,
    migrationsFolder: opts.migrationsFolder ?? defaultMigrationsFolder('mysql'),
  });
  return {
    backend: mysql,
    store: new SessionStore<'mysql'>(
      mysql,
      { spelling: new MysqlSpelling(), runner: new MysqlRunner(opened) },
      clock,
      opts.searchRankWindow,
    ),
  };
}
