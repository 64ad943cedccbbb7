/** SQLite's entry in the engine registry: `sqlite:` URLs and bare paths, and the app's better-sqlite3 Database. */
import type { Database as BetterSqlite3Database } from 'better-sqlite3';
import { StoreNotFoundError, ValidationError } from '../../errors.js';
import type { EngineDescriptor, UrlReader } from '../engine.js';

export type SqliteLocation = { backend: 'sqlite'; path: string; memory: boolean };
export type SqliteClientTarget = { kind: 'sqlite'; client: BetterSqlite3Database };

const isFunction = (value: unknown): boolean => typeof value === 'function';

function parsePath(path: string, reader: UrlReader): SqliteLocation {
  if (path === '') reader.refuse('sqlite: needs a file path or ":memory:"');
  if (/^\s*[a-z][a-z0-9+.-]*:\/\//i.test(path)) reader.unsupported();
  const memory = path === ':memory:';
  return { backend: 'sqlite', path: memory ? ':memory:' : path, memory };
}

export const sqliteEngine: EngineDescriptor<'sqlite', SqliteLocation, SqliteClientTarget> = {
  name: 'sqlite',
  hasSchemas: false,
  schemes: ['sqlite:'],
  parseUrl(url, reader) {
    const sqlite = /^sqlite:(?:\/\/)?(.*)$/i.exec(url);
    return sqlite ? parsePath(sqlite[1] ?? '', reader) : undefined;
  },
  parseBarePath: parsePath,
  clients: ['a better-sqlite3 Database'],
  classifyClient(target) {
    const t = target as Record<string, unknown>;
    // better-sqlite3: prepare/pragma and its name/open/memory/readonly properties.
    if (
      isFunction(t.prepare) &&
      isFunction(t.pragma) &&
      typeof t.name === 'string' &&
      typeof t.open === 'boolean' &&
      typeof t.readonly === 'boolean'
    )
      return { kind: 'sqlite', client: target as BetterSqlite3Database };
    return undefined;
  },
  describeClient: (target) => `sqlite client (${target.client.memory ? ':memory:' : target.client.name})`,
  where: (location) => (location.memory ? { kind: 'memory' } : { kind: 'file', path: location.path }),
  // poolSize and connectTimeoutSeconds are ignored by SQLite URLs, as they always were.
  urlOptions: () => ['poolSize', 'connectTimeoutSeconds'],
  assertLocationExists(location) {
    // A file is checked where it is opened (sqlite/open.ts: better-sqlite3's fileMustExist, also for readonly).
    if (location.memory)
      throw new StoreNotFoundError('sqlite::memory:', 'MISSING', ':memory:', 'an in-memory database is always new');
  },
  refuseOptions(options) {
    // SQLite has no schemas: refuse rather than ignore an option that promises a layout it cannot have.
    if (options.schema !== undefined)
      throw new ValidationError('options.schema', 'a Postgres option; SQLite has no schemas');
  },
  open: async (request, options, clock) => (await import('./open-store.js')).openSqliteStore(request, options, clock),
  constraintCodes: {
    SQLITE_CONSTRAINT_FOREIGNKEY: 'foreign-key',
    SQLITE_CONSTRAINT_UNIQUE: 'unique',
    SQLITE_CONSTRAINT_PRIMARYKEY: 'unique',
  },
  searchStructuresPushDrops: 'the FTS5 tables and their triggers',
  testing: async () => (await import('./testing.js')).sqliteTesting,
};
