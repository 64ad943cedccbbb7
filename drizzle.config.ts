/**
 * One drizzle-kit config for every dialect. `DRIZZLE_DIALECT` picks the dialect (sqlite | pg | mysql, default
 * sqlite); `DRIZZLE_OUT` overrides the output folder (the drift check generates into a temp copy).
 * `npm run db:generate` and `npm run db:check` run every dialect for you.
 */
import { defineConfig } from 'drizzle-kit';

const dialect = process.env.DRIZZLE_DIALECT ?? 'sqlite';
if (dialect !== 'sqlite' && dialect !== 'pg' && dialect !== 'mysql') {
  throw new Error(`DRIZZLE_DIALECT must be "sqlite", "pg" or "mysql", got "${dialect}"`);
}

export default defineConfig({
  dialect: dialect === 'pg' ? 'postgresql' : dialect === 'mysql' ? 'mysql' : 'sqlite',
  schema: `./src/schema/${dialect}.ts`,
  out: process.env.DRIZZLE_OUT ?? `./drizzle/${dialect}`,
  // Never let push/pull touch the FTS5 virtual tables and their shadow tables.
  tablesFilter: ['!messages_fts*'],
  strict: true,
  verbose: true,
});
