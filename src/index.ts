/**
 * hermes-sessiondb: the Hermes SessionDB contract on SQLite and PostgreSQL.
 */
export { openStore, openStoreOptionsSchema, SessionStore, type OpenStoreOptions } from './store.js';
export type { Backend, DriverName } from './db/backend.js';
export { SqliteBackend, type SqliteDb, type SqliteSchema } from './db/sqlite/backend.js';
export { PgBackend } from './db/pg/backend.js';
export type { PgDb, PgSchema } from './db/pg/open.js';
export type { Dialect, MigrationReport, MigrationStatus } from './db/migrations.js';
export type { SchemaInfo, ColumnInfo, IndexInfo, ForeignKeyInfo } from './db/introspect.js';
export { parseStoreUrl, redactUrl, type StoreLocation } from './db/url.js';
export {
  SessionDbError,
  ValidationError,
  InvalidUrlError,
  ConnectionError,
  MigrationError,
  StoreBusyError,
  StoreClosedError,
  type SessionDbErrorCode,
  type MigrationErrorReason,
} from './errors.js';
export { nowEpochSeconds, roundToMicros } from './codecs/time.js';
export * as sqliteSchema from './schema/sqlite.js';
export * as pgSchema from './schema/pg.js';
