import type { Database } from 'better-sqlite3';
import { type BetterSQLite3Database, drizzle } from 'drizzle-orm/better-sqlite3';
import * as sqliteSchema from '../../schema/sqlite.js';
import type { Backend } from '../backend.js';
import { introspectSqlite } from './introspect.js';
import type { MigrationReport, MigrationStatus } from '../migrations.js';
import type { MissingStructure } from '../search-structures.js';
import { missingSqliteSearchStructures } from './search-structures.js';
import { retryWhileBusy } from './busy.js';
import { migrateSqlite, sqliteMigrationStatus } from './migrate.js';
import { applyBusyTimeout, applyJournalMode, currentJournalMode } from './open.js';

export type SqliteSchema = typeof sqliteSchema;
export type SqliteDb = BetterSQLite3Database<SqliteSchema>;

export interface SqliteBackendConfig {
  url: string;
  client: Database;
  journalMode?: 'WAL' | 'DELETE';
  migrationsFolder: string;
  writeDeadlineMs: number;
  /** An app's connection (openStore given a Database): close() leaves it open, with this busy_timeout back. */
  adopted?: { busyTimeoutMs: number };
}

export class SqliteBackend implements Backend {
  readonly dialect = 'sqlite' as const;
  readonly driver = 'better-sqlite3' as const;
  readonly url: string;
  /** The better-sqlite3 connection (one per store). */
  readonly client: Database;
  /** Drizzle over that connection. */
  readonly db: SqliteDb;
  readonly writeDeadlineMs: number;
  private readonly migrationsFolder: string;
  private readonly requestedJournalMode: 'WAL' | 'DELETE' | undefined;
  private readonly adopted: { busyTimeoutMs: number } | undefined;
  private closed = false;

  constructor(config: SqliteBackendConfig) {
    this.url = config.url;
    this.client = config.client;
    this.requestedJournalMode = config.journalMode;
    this.migrationsFolder = config.migrationsFolder;
    this.writeDeadlineMs = config.writeDeadlineMs;
    this.adopted = config.adopted;
    this.db = drizzle(config.client, { schema: sqliteSchema });
  }

  migrate(): Promise<MigrationReport> {
    return migrateSqlite(this.client, {
      migrationsFolder: this.migrationsFolder,
      deadlineMs: this.writeDeadlineMs,
      where: this.url,
    });
  }

  async migrationStatus(): Promise<MigrationStatus> {
    return sqliteMigrationStatus(this.client, this.migrationsFolder);
  }

  /** The search structures of the recorded migrations that are not in the file (see search-structures.ts). */
  async missingSearchStructures(): Promise<MissingStructure[]> {
    const status = await this.migrationStatus();
    return missingSqliteSearchStructures(this.client, status.applied);
  }

  /** The journal mode in force: 'wal', 'delete' (WAL refused or forced) or 'memory'. */
  get journalMode(): string {
    return currentJournalMode(this.client);
  }

  /** Put the file in its working journal mode (WAL unless told otherwise); called once the file is accepted. */
  async activate(): Promise<string> {
    return retryWhileBusy(() => applyJournalMode(this.client, { journalMode: this.requestedJournalMode }), {
      deadlineMs: this.writeDeadlineMs,
    });
  }

  async introspect() {
    return introspectSqlite(this.client);
  }

  async close(): Promise<void> {
    if (this.closed || !this.client.open) return;
    this.closed = true;
    if (this.adopted) {
      // The app's connection: it stays open (and in its journal mode); only our short lock wait is undone.
      applyBusyTimeout(this.client, this.adopted.busyTimeoutMs);
      return;
    }
    try {
      // Fold the WAL back into the database so the file is self-contained (best effort, like Hermes).
      if (this.journalMode === 'wal' && !this.client.readonly) this.client.pragma('wal_checkpoint(PASSIVE)');
    } finally {
      this.client.close();
    }
  }
}
