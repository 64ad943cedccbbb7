import { type SQL, sql } from 'drizzle-orm';
import type { Backend, DriverName } from '../backend.js';
import { introspectPg } from './introspect.js';
import type { MigrationReport, MigrationStatus } from '../migrations.js';
import { migratePg, pgMigrationStatus } from './migrate.js';
import { type OpenedPg, type PgDb, type PgExecutor, rowsOf } from './open.js';
import { UnsupportedLocaleError } from '../../errors.js';
import type { Table } from '../ops.js';
import { DEFAULT_SCHEMA, type QualifiedNames, qualifiedNames, qualifiedName } from '../../sql/tables.js';
import type { MissingStructure } from '../search-structures.js';
import { missingPgSearchStructures } from './search-structures.js';

export interface PgBackendConfig {
  url: string;
  driver: Extract<DriverName, 'postgres' | 'pglite'>;
  opened: OpenedPg;
  migrationsFolder: string;
  /** Open a database whose LC_CTYPE is not UTF-8 with a warning instead of UnsupportedLocaleError (for reading it out). */
  allowAsciiOnlyCtype?: boolean;
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

  private readonly allowAsciiOnlyCtype: boolean;
  /** The schema holding the store (`openStore`'s `schema` option; 'public' for the default layout). */
  readonly schema: string;
  /** Our tables and functions, qualified with `schema`: every runtime statement names them so. */
  readonly names: QualifiedNames;

  constructor(config: PgBackendConfig) {
    this.allowAsciiOnlyCtype = config.allowAsciiOnlyCtype ?? false;
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

  /**
   * Once the database is accepted: check that its LC_CTYPE classifies non-ASCII letters. Under LC_CTYPE 'C'
   * the word index cuts every non-ASCII letter out (привет, straße, café become unsearchable) and pg_trgm
   * drops CJK: refuse, naming the fix, unless the caller only reads (`allowAsciiOnlyCtype`: a warning).
   * Called before anything is migrated, so a refused database is left as it was.
   */
  async checkLocale(): Promise<void> {
    const [row] = rowsOf<{ ctype: string; letters: boolean }>(
      await this.db.execute(
        sql`SELECT (SELECT datctype FROM pg_database WHERE datname = current_database()) AS ctype, ('é' ~ '^[[:alnum:]]$' AND 'Я' ~ '^[[:alnum:]]$') AS letters`,
      ),
    );
    if (row && !row.letters) {
      const message =
        `${this.url}: this database's LC_CTYPE is '${row.ctype}', under which Postgres does not see non-ASCII letters: ` +
        'word search would miss привет, straße and café, and CJK substring search would miss matches. Create the ' +
        "database with a UTF-8 locale (CREATE DATABASE … LC_CTYPE 'C.UTF-8' TEMPLATE template0) and copy the " +
        'sessions into it (hermes-sessiondb copy --from <this url> --to <the new url>).';
      if (!this.allowAsciiOnlyCtype) throw new UnsupportedLocaleError(row.ctype, message);
      process.emitWarning(message, { code: 'HERMES_SESSIONDB_CTYPE' });
    }
  }

  /** The search structures of the recorded migrations that are not in the database (see search-structures.ts). */
  async missingSearchStructures(): Promise<MissingStructure[]> {
    const status = await this.migrationStatus();
    return missingPgSearchStructures(this.opened, status.applied, this.schema);
  }

  /** Nothing to change in the database once it is accepted (the locale was checked before migrating). */
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
