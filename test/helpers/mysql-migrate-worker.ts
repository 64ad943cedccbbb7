/** Child process for the MySQL kill test: migrate `<url>` with the migrations in `<folder>`; killed mid-way. */
import mysql from 'mysql2/promise';
import { migrateMysql } from '../../src/db/mysql/migrate.js';

const [url, folder] = process.argv.slice(2);
if (!url || !folder) throw new Error('usage: mysql-migrate-worker <url> <folder>');
const c = await mysql.createConnection({ uri: url });
process.stdout.write('migrating\n');
await migrateMysql(c, { where: 'worker', migrationsFolder: folder });
process.stdout.write('done\n');
await c.end();
