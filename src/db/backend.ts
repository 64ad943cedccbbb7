/**
 * The dialect slot: what the store needs from a database, implemented once per dialect
 * (`sqlite/backend.ts`, `pg/backend.ts`). Nothing above this layer branches on the dialect by name.
 */
import type { SchemaInfo } from './introspect.js';
import type { Dialect, MigrationReport, MigrationStatus } from './migrations.js';

export type DriverName = 'better-sqlite3' | 'postgres' | 'pglite' | 'mysql2';

export interface Backend {
  readonly dialect: Dialect;
  readonly driver: DriverName;
  /** The store URL with any password redacted, for messages. */
  readonly url: string;
  migrate(): Promise<MigrationReport>;
  migrationStatus(): Promise<MigrationStatus>;
  /** Settle what is stored in the database itself (SQLite: the journal mode), once the store accepted it. */
  activate(): Promise<unknown>;
  introspect(): Promise<SchemaInfo>;
  close(): Promise<void>;
}
