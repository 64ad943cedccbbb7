import { type SQL, sql } from 'drizzle-orm';
import type { Backend, DriverName } from '../backend.js';
import { introspectPg } from './introspect.js';
import type { MigrationReport, MigrationStatus } from '../migrations.js';
import { migratePg, pgMigrationStatus } from './migrate.js';
import { type OpenedPg, type PgDb, type PgExecutor, rowsOf } from './open.js';
import type { Table } from '../ops.js';
import { DEFAULT_SCHEMA, type QualifiedNames, qualifiedNames, qualifiedName } from '../../sql/tables.js';
import type { MissingStructure } from '../search-structures.js';
import { missingPgSearchStructures } from './search-structures.js';

export interface PgBackendConfig {
  url: string;
  driver: Extract<DriverName, 'postgres' | 'pglite'>;
  opened: OpenedPg;
  migrationsFolder: string;
  /** The schema holding the store's tables, functions and migration history (default: public, today's layout). */
  schema?: string;
}

export class PgBackend implements Backend {
  readonly dialect = 'pg' as const;
  readonly driver: 'postgres' | 'pglite';
  readonly url: string;
  private readonly opened: OpenedPg;
  private readonly migrationsFolder: string;
  private closed = false;

  /** The schema holding the store (`openStore`'s `schema` option; 'public' for the default layout). */
  readonly schema: string;
  /** Our tables and functions, qualified with `schema`: every runtime statement names them so. */
  readonly names: QualifiedNames;

  constructor(config: PgBackendConfig) {
    this.url = config.url;
    this.driver = config.driver;
    this.opened = config.opened;
    this.migrationsFolder = config.migrationsFolder;
    this.schema = config.schema ?? DEFAULT_SCHEMA;
    this.names = qualifiedNames(this.schema);
  }

  /** Drizzle over a postgres.js pool or a PGlite instance (the pool is replaced after a connection is lost mid-transaction). */
  get db(): PgDb {
    return this.opened.db;
  }

  /** Run one query outside a transaction on the current pool (see OpenedPg.execute). */
  execute(query: SQL): Promise<unknown> {
    return this.opened.execute(query);
  }

  /** Run one prepared statement outside a transaction (see OpenedPg.statement). */
  statement(text: string, params: readonly unknown[]): Promise<Array<Record<string, unknown>>> {
    return this.opened.statement(text, params);
  }

  /** Like execute, rows as arrays of values in select-list order (see OpenedPg.values). */
  values(query: SQL): Promise<unknown[][]> {
    return this.opened.values(query);
  }

  /** Like values, with the column names in select-list order (see OpenedPg.table). */
  table(query: SQL): Promise<Table> {
    return this.opened.table(query);
  }

  /** Run `body` in one transaction (see OpenedPg.transaction). */
  transaction<T>(body: (executor: PgExecutor) => Promise<T>): Promise<T> {
    return this.opened.transaction(body);
  }

  migrate(): Promise<MigrationReport> {
    return migratePg(this.opened, { migrationsFolder: this.migrationsFolder, where: this.url, schema: this.schema });
  }

  migrationStatus(): Promise<MigrationStatus> {
    return pgMigrationStatus(this.db, this.migrationsFolder, this.schema);
  }

  /** The search structures of the recorded migrations that are not in the database (see search-structures.ts). */
  async missingSearchStructures(): Promise<MissingStructure[]> {
    const status = await this.migrationStatus();
    return missingPgSearchStructures(this.opened, status.applied, this.schema);
  }

  /** Nothing to change in the database once it is accepted. */
  async activate(): Promise<void> {}

  /** True when pg_trgm extracts trigrams from CJK text; undefined when pg_trgm is not installed. */
  async trigramSeesMultibyte(): Promise<boolean | undefined> {
    // show_trgm() called in the schema pg_trgm lives in (read from the catalog, not found through search_path).
    const [ext] = rowsOf<{ schema: string }>(
      await this.db.execute(sql`SELECT n.nspname AS schema FROM pg_catalog.pg_extension e
        JOIN pg_catalog.pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'pg_trgm'`),
    );
    if (!ext) return undefined;
    const showTrgm = qualifiedName(ext.schema, 'show_trgm');
    const [row] = rowsOf<{ n: number | null }>(
      await this.db.execute(sql`SELECT cardinality(${showTrgm}('记忆断裂')) AS n`),
    );
    return (row?.n ?? 0) > 0;
  }

  introspect() {
    return introspectPg(this.db, this.schema);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.opened.close();
  }
}
