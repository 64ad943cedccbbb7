/**
 * Opening a MySQL/MariaDB store: a mysql2 pool whose every connection is set up as the store reads and writes:
 *
 * - `time_zone '+00:00'`: DATETIME(6) columns hold UTC, and nothing converts them on the way;
 * - `sql_mode` ANSI_QUOTES and PIPES_AS_CONCAT (the repositories' SQL is standard SQL: "name", ||) plus
 *   strict tables (a value that does not fit is an error, never silently cut);
 * - READ COMMITTED: a write waits for a row another write holds instead of taking gap locks (the deadlocks of
 *   REPEATABLE READ between appends to different sessions);
 * - utf8mb4 on the wire, binary columns decoded as UTF-8 text (schema/mysql.ts: compared text is VARBINARY),
 *   DATETIME as its text (exact to the microsecond), BIGINT as a number while it is exact.
 *
 * mysql2 is loaded on demand: SQLite and Postgres users never load it.
 */
import type { Pool, PoolConnection, PoolOptions } from 'mysql2/promise';
import { ConnectionError } from '../../errors.js';
import { redactUrl, scrubErrorSecrets } from '../url.js';

export const MYSQL_SESSION_SETTINGS = [
  "SET time_zone = '+00:00', " +
    "sql_mode = 'ANSI_QUOTES,PIPES_AS_CONCAT,STRICT_ALL_TABLES,NO_ZERO_DATE,ERROR_FOR_DIVISION_BY_ZERO,NO_ENGINE_SUBSTITUTION'",
  // Its own statement: MySQL 8 and MariaDB 10 name the variable differently.
  'SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED',
];

export interface MysqlOpenOptions {
  poolSize: number;
  connectTimeoutSeconds: number;
}

/**
 * Binary and text columns both arrive as UTF-8 text: compared text is stored as VARBINARY (schema/mysql.ts).
 * A column read under an alias starting with `bin_` arrives as bytes (the search index's postings).
 */
function textOfBytes(field: { type: string; name: string; buffer(): Buffer | null }, next: () => unknown): unknown {
  if (field.type === 'BLOB' || field.type === 'VAR_STRING' || field.type === 'STRING') {
    if (field.name.startsWith('bin_')) return field.buffer();
    const bytes = field.buffer();
    return bytes === null ? null : bytes.toString('utf8');
  }
  return next();
}

/** A pool of set-up connections (see the file's comment), and a clean way to end it. */
export interface OpenedMysql {
  readonly pool: Pool;
  /** A pooled connection with the session settings applied; release() it. */
  connection(): Promise<PoolConnection>;
  /** The server's innodb_autoinc_lock_mode (2 hands out a multi-row INSERT's ids with gaps under concurrency). */
  readonly autoincLockMode: number;
  /** Whether the server is MariaDB, whose INSERT has RETURNING (MySQL's has not). */
  readonly mariadb: boolean;
  close(): Promise<void>;
}

export async function openMysql(url: string, options: MysqlOpenOptions): Promise<OpenedMysql> {
  const mysql = await import('mysql2/promise');
  // mariadb:// is the same protocol; mysql2 only reads mysql:// URLs.
  const uri = url.replace(/^mariadb:/i, 'mysql:');
  const config: PoolOptions = {
    uri,
    connectionLimit: options.poolSize,
    connectTimeout: options.connectTimeoutSeconds * 1000,
    charset: 'UTF8MB4_BIN',
    dateStrings: true,
    supportBigNumbers: true,
    bigNumberStrings: false,
    typeCast: textOfBytes,
    multipleStatements: false,
    waitForConnections: true,
  };
  const where = redactUrl(url);
  const refused = (error: unknown) => {
    scrubErrorSecrets(error, url);
    const code = (error as { code?: unknown }).code;
    const reason = error instanceof Error ? error.message : String(error);
    return new ConnectionError(where, typeof code === 'string' ? `${reason} (${code})` : reason, { cause: error });
  };
  let pool: Pool;
  try {
    pool = mysql.createPool(config);
  } catch (error) {
    throw refused(error);
  }
  const ready = new WeakSet<object>();
  const connection = async (): Promise<PoolConnection> => {
    let c: PoolConnection;
    try {
      c = await pool.getConnection();
    } catch (error) {
      throw scrubErrorSecrets(error, url);
    }
    const core = (c as unknown as { connection: object }).connection ?? c;
    if (!ready.has(core)) {
      try {
        for (const setting of MYSQL_SESSION_SETTINGS) await c.query(setting);
      } catch (error) {
        c.destroy();
        throw error;
      }
      ready.add(core);
    }
    return c;
  };
  let autoincLockMode = 1;
  let mariadb = false;
  try {
    const c = await connection();
    try {
      const [found] = await c.query('SELECT @@innodb_autoinc_lock_mode AS mode, VERSION() AS version');
      const server = (found as Array<{ mode: unknown; version: unknown }>)[0];
      autoincLockMode = Number(server?.mode ?? 1);
      mariadb = /mariadb/i.test(String(server?.version ?? ''));
    } finally {
      c.release();
    }
  } catch (error) {
    await pool.end().catch(() => {});
    throw refused(error);
  }
  let closed: Promise<void> | undefined;
  return {
    pool,
    connection,
    autoincLockMode,
    mariadb,
    close: () => {
      closed ??= pool.end().catch(() => {});
      return closed;
    },
  };
}
