/**
 * Raw connections to fresh databases on the MariaDB/MySQL server at MYSQL_URL (test/backends.ts), for the
 * tests of what is MySQL's alone (its column types, its migrator's recovery); stores come from
 * test/backends.ts's mariadb harness.
 */
import mysql from 'mysql2/promise';
import { MYSQL_URL } from '../backends.js';

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
