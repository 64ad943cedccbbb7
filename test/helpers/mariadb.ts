/**
 * The MariaDB/MySQL server for the tests: MYSQL_URL (default mysql://root@127.0.0.1:3306/test) is the admin
 * connection; each test database is a fresh `CREATE DATABASE`, dropped afterwards. Under CI=true an
 * unreachable server fails the run; elsewhere the MySQL tests are skipped with the reason printed.
 */
import mysql from 'mysql2/promise';
import { openStore } from '../../src/index.js';
import { type MysqlHarness, isCI } from '../backends.js';

export const MYSQL_URL = process.env.MYSQL_URL ?? 'mysql://root@127.0.0.1:3306/test';

const redacted = () => MYSQL_URL.replace(/:[^@/:]*@/, ':***@');

/** Why the server cannot be used here, or undefined when it can. Fatal under CI=true. */
export async function probeMysql(): Promise<string | undefined> {
  try {
    const c = await mysql.createConnection({ uri: MYSQL_URL, connectTimeout: 5000 });
    await c.end();
    return undefined;
  } catch (error) {
    const reason = `MySQL/MariaDB at ${redacted()} is unreachable (${(error as Error).message})`;
    if (isCI) throw new Error(`mandatory under CI=true: ${reason}`);
    console.warn(`skipped: ${reason}. Start it (see README) or set MYSQL_URL.`);
    return reason;
  }
}

export interface MysqlDatabases {
  /** A fresh, empty database and a connection to it (utf8mb4, times as strings, as the store reads them). */
  fresh(): Promise<mysql.Connection>;
  /** Drop every database made, close every connection. */
  cleanup(): Promise<void>;
}

export function mysqlDatabases(): MysqlDatabases {
  const prefix = `hsdb_${process.pid}_${Date.now().toString(36)}`;
  const made: string[] = [];
  const open: mysql.Connection[] = [];
  let admin: mysql.Connection | undefined;
  return {
    async fresh() {
      admin ??= await mysql.createConnection({ uri: MYSQL_URL });
      const name = `${prefix}_${made.length}`;
      await admin.query(`CREATE DATABASE \`${name}\``);
      made.push(name);
      const url = new URL(MYSQL_URL);
      url.pathname = `/${name}`;
      const c = await mysql.createConnection({
        uri: url.toString(),
        charset: 'utf8mb4',
        dateStrings: true,
        supportBigNumbers: true,
        bigNumberStrings: true,
      });
      open.push(c);
      return c;
    },
    async cleanup() {
      for (const c of open.splice(0)) await c.end();
      if (!admin) return;
      for (const name of made.splice(0)) await admin.query(`DROP DATABASE IF EXISTS \`${name}\``);
      await admin.end();
      admin = undefined;
    },
  };
}

/** The contract harness of the MariaDB/MySQL server at MYSQL_URL: a fresh database per store. */
export async function mariadbHarness(): Promise<MysqlHarness> {
  const unavailable = await probeMysql();
  const prefix = `hsdb_${process.pid}_${Date.now().toString(36)}`;
  const created: string[] = [];
  let admin: mysql.Connection | undefined;
  const freshUrl = async () => {
    admin ??= await mysql.createConnection({ uri: MYSQL_URL });
    const name = `${prefix}_${created.length}`;
    await admin.query(`CREATE DATABASE \`${name}\``);
    created.push(name);
    const url = new URL(MYSQL_URL);
    url.pathname = `/${name}`;
    return url.toString();
  };
  return {
    name: 'mariadb',
    dialect: 'mysql',
    skips: {},
    unavailable,
    required: isCI,
    freshUrl,
    open: async (options) => openStore(await freshUrl(), options),
    openAt: (url, options) => openStore(url, options),
    cleanup: async () => {
      if (!admin) return;
      const client = admin;
      admin = undefined;
      for (const name of created.splice(0)) await client.query(`DROP DATABASE IF EXISTS \`${name}\``);
      await client.end();
    },
  };
}
