import type { Backend } from '../backend.js';
import { introspectMysql } from './introspect.js';
import type { MigrationReport, MigrationStatus } from '../migrations.js';
import { migrateMysql, mysqlMigrationStatus } from './migrate.js';
import type { OpenedMysql } from './open.js';
import type { MissingStructure } from '../search-structures.js';
import { missingMysqlSearchStructures } from './search-structures.js';

export interface MysqlBackendConfig {
  url: string;
  opened: OpenedMysql;
  migrationsFolder: string;
}

export class MysqlBackend implements Backend {
  readonly dialect = 'mysql' as const;
  readonly driver = 'mysql2' as const;
  readonly url: string;
  readonly opened: OpenedMysql;
  private readonly migrationsFolder: string;

  constructor(config: MysqlBackendConfig) {
    this.url = config.url;
    this.opened = config.opened;
    this.migrationsFolder = config.migrationsFolder;
  }

  /** The mysql2 pool (every connection set up as open.ts describes). */
  get pool() {
    return this.opened.pool;
  }

  /** Run `body` on one pooled connection of the store's. */
  async withConnection<T>(body: (c: Awaited<ReturnType<OpenedMysql['connection']>>) => Promise<T>): Promise<T> {
    const c = await this.opened.connection();
    try {
      return await body(c);
    } finally {
      c.release();
    }
  }

  migrate(): Promise<MigrationReport> {
    return this.withConnection((c) => migrateMysql(c, { where: this.url, migrationsFolder: this.migrationsFolder }));
  }

  migrationStatus(): Promise<MigrationStatus> {
    return this.withConnection((c) => mysqlMigrationStatus(c, this.migrationsFolder));
  }

  /** The search structures of the recorded migrations that are not in the database (see search-structures.ts). */
  async missingSearchStructures(): Promise<MissingStructure[]> {
    const status = await this.migrationStatus();
    return this.withConnection((c) => missingMysqlSearchStructures(c, status.applied));
  }

  async activate(): Promise<void> {}

  introspect() {
    return this.withConnection((c) => introspectMysql(c));
  }

  close(): Promise<void> {
    return this.opened.close();
  }
}
