/**
 * `npm run db:generate [-- --name=<what_changed>]`: generate the next migration for both dialects from
 * src/schema/*.ts. For SQL Drizzle cannot model, add `--custom` to get an empty file to fill in.
 * Read the generated SQL before committing it.
 */
import { DIALECTS, drizzleKit } from './drizzle-kit.js';

let failed = false;
for (const dialect of DIALECTS) {
  const result = drizzleKit(dialect, ['generate', ...process.argv.slice(2)]);
  process.stdout.write(`--- ${dialect} ---\n${result.stdout}${result.stderr}`);
  if (result.status !== 0) failed = true;
}
process.exitCode = failed ? 1 : 0;
