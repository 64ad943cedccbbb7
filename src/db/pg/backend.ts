import type { Backend, DriverName } from '../backend.js';
import { introspectPg } from '../introspect.js';
import type { MigrationReport, MigrationStatus } from '../migrations.js';
import { migratePg, pgMigrationStatus } from './migrate.js';
import type { OpenedPg, PgDb } from './open.js';

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
  /** Drizzle over a postgres.js pool or a PGlite instance. */
  readonly db: PgDb;
  private readonly opened: OpenedPg;
  private readonly migrationsFolder: string;
  private closed = false;

  constructor(config: PgBackendConfig) {
    this.url = config.url;
    this.driver = config.driver;
    this.opened = config.opened;
    this.db = config.opened.db;
    this.migrationsFolder = config.migrationsFolder;
  }

  migrate(): Promise<MigrationReport> {
    return migratePg(this.db, { migrationsFolder: this.migrationsFolder, where: this.url });
  }

  migrationStatus(): Promise<MigrationStatus> {
    return pgMigrationStatus(this.db, this.migrationsFolder);
  }

  /** Nothing to switch on Postgres once the database is accepted. */
  async activate(): Promise<void> {}

  introspect() {
    return introspectPg(this.db);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.opened.close();
  }
}
