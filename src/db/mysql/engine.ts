/** MySQL/MariaDB's entry in the engine registry: mysql:// and mariadb:// URLs (no client is adopted). */
import { ValidationError } from '../../errors.js';
import type { EngineDescriptor } from '../engine.js';

export type MysqlLocation = { backend: 'mysql'; url: string };

export const mysqlEngine: EngineDescriptor<'mysql', MysqlLocation, never> = {
  name: 'mysql',
  hasSchemas: false,
  schemes: ['mysql://', 'mariadb://'],
  parseUrl(url, reader) {
    if (!/^(mysql|mariadb):\/\//i.test(url)) return undefined;
    const parsed = URL.canParse(url) ? new URL(url) : undefined;
    if (!parsed)
      return reader.refuse('not a valid mysql:// URL (percent-encode any of : / @ ? # % in the user name or password)');
    if (!parsed.hostname) return reader.refuse('no host');
    if (parsed.pathname.replace(/^\//, '') === '') return reader.refuse('no database name');
    return { backend: 'mysql', url };
  },
  clients: [],
  classifyClient: () => undefined,
  describeClient: () => 'mysql client',
  where: (location) => ({ kind: 'server', url: location.url }),
  urlOptions: () => ['poolSize', 'connectTimeoutSeconds'],
  assertLocationExists() {}, // checked once connected: see assertHoldsStore
  refuseOptions(options) {
    if (options.schema !== undefined)
      throw new ValidationError(
        'options.schema',
        'a Postgres option; a MySQL store is one database (name it in the URL)',
      );
    if (options.readonly) throw new ValidationError('options.readonly', 'an SQLite option; use a read-only MySQL user');
  },
  // Loaded on demand: mysql2 stays out of SQLite and Postgres users' processes.
  open: async (request, options, clock) => (await import('./open-store.js')).openMysqlStore(request, options, clock),
  constraintCodes: {},
  searchStructuresPushDrops: 'the message_search_* tables and their triggers',
  testing: async () => (await import('./testing.js')).mysqlTesting,
};
