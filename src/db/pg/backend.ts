import { sql } from 'drizzle-orm';
import type { Backend, DriverName } from '../backend.js';
import { introspectPg } from '../introspect.js';
import type { MigrationReport, MigrationStatus } from '../migrations.js';
import { migratePg, pgMigrationStatus } from './migrate.js';
import { type OpenedPg, type PgDb, type PgExecutor, rowsOf } from './open.js';

export interface PgBackendConfig {
  url: string;
  driver: Extract<DriverName, 'postgres' | 'pglite'>;
  opened: OpenedPg;
  migrationsFolder: string;
}

export class PgBackend implements Backend {
  readonly dialect = 'pg' as const;
  readonly driver: 'postgres' | 'pglite';
  readonly url: string;
  private readonly opened: OpenedPg;
  private readonly migrationsFolder: string;
  private closed = false;

  constructor(config: PgBackendConfig) {
    this.url = config.url;
    this.driver = config.driver;
    this.opened = config.opened;
    this.migrationsFolder = config.migrationsFolder;
  }

  /** Drizzle over a postgres.js pool or a PGlite instance (the pool is replaced after a connection is lost mid-transaction). */
  get db(): PgDb {
    return this.opened.db;
  }

  /** Run `body` in one transaction (see OpenedPg.transaction). */
  transaction<T>(body: (executor: PgExecutor) => Promise<T>): Promise<T> {
    return this.opened.transaction(body);
  }

  migrate(): Promise<MigrationReport> {
    return migratePg(this.db, { migrationsFolder: this.migrationsFolder, where: this.url });
  }

  migrationStatus(): Promise<MigrationStatus> {
    return pgMigrationStatus(this.db, this.migrationsFolder);
  }

  /**
   * Once the database is accepted: check that pg_trgm sees multibyte letters. Under a non-UTF-8
   * LC_CTYPE ("C") it silently drops them, and CJK substring search would find nothing; say so loudly.
   */
  async activate(): Promise<void> {
    const capable = await this.trigramSeesMultibyte();
    if (capable === false) {
      process.emitWarning(
        `${this.url}: pg_trgm cannot see multibyte characters under this database's LC_CTYPE; CJK search ` +
          'will miss matches. Create the database with a UTF-8 locale (for example LC_CTYPE \'C.UTF-8\').',
        { code: 'HERMES_SESSIONDB_TRGM_CTYPE' },
      );
    }
  }

  /** True when pg_trgm extracts trigrams from CJK text; undefined when pg_trgm is not installed. */
  async trigramSeesMultibyte(): Promise<boolean | undefined> {
    const [ext] = rowsOf<{ installed: boolean }>(
      await this.db.execute(sql`SELECT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'pg_trgm') AS installed`),
    );
    if (!ext?.installed) return undefined;
    const [row] = rowsOf<{ n: number | null }>(await this.db.execute(sql`SELECT cardinality(show_trgm('记忆断裂')) AS n`));
    return (row?.n ?? 0) > 0;
  }

  introspect() {
    return introspectPg(this.db);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.opened.close();
  }
}
