/** The openStore options only an SQLite store takes (openStoreOptionsSchema, src/open.ts, holds them with the rest). */
import { z } from 'zod';

export const sqliteOpenOptions = {
  /**
   * SQLite only: how long one statement waits for a lock inside SQLite (default 5 ms). That wait blocks the
   * event loop (better-sqlite3 is synchronous), so keep it short: past it a write waits asynchronously and
   * retries until `writeDeadlineMs`.
   */
  busyTimeoutMs: z.number().int().min(0).max(600_000).default(5),
  /** SQLite only: how long a write keeps retrying a locked database before StoreBusyError (default 30 s). */
  writeDeadlineMs: z.number().int().min(0).max(3_600_000).default(30_000),
  /** SQLite only: `synchronous` pragma (default FULL; NORMAL trades the last commits on power loss for speed). */
  synchronous: z.enum(['FULL', 'NORMAL', 'EXTRA']).default('FULL'),
  /** SQLite only: force a journal mode instead of WAL-with-DELETE-fallback. */
  journalMode: z.enum(['WAL', 'DELETE']).optional(),
  /** SQLite only: open read-only (implies migrate: false, and that the file must exist). */
  readonly: z.boolean().default(false),
};
