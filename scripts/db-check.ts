/**
 * `npm run db:check`: fail when src/schema and the checked-in migrations disagree.
 *
 * For each dialect: drizzle-kit's own consistency check, then `drizzle-kit generate` into a temporary copy
 * of drizzle/<dialect>; if that produces anything, the schema changed without a migration. Journal
 * timestamps must strictly increase (Drizzle 0.x skips a migration that is older than the newest applied).
 */
import fs from 'node:fs';
import path from 'node:path';
import { readMigrations } from '../src/db/migrations.js';
import { DIALECTS, drizzleKit } from './drizzle-kit.js';

function listFiles(dir: string): string[] {
  return fs
    .readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => path.relative(dir, path.join(e.parentPath, e.name)))
    .sort();
}

const problems: string[] = [];
for (const dialect of DIALECTS) {
  const folder = path.resolve('drizzle', dialect);
  try {
    readMigrations(folder);
  } catch (error) {
    problems.push(`[${dialect}] ${(error as Error).message}`);
  }

  const check = drizzleKit(dialect, ['check']);
  if (check.status !== 0) problems.push(`[${dialect}] drizzle-kit check failed:\n${check.stdout}${check.stderr}`);

  // drizzle-kit only accepts an `out` relative to the project (it prefixes './'), so the copy lives in .tmp/.
  fs.mkdirSync('.tmp', { recursive: true });
  const scratch = fs.mkdtempSync(path.join('.tmp', `drift-${dialect}-`));
  fs.cpSync(folder, scratch, { recursive: true });
  const generate = drizzleKit(dialect, ['generate', '--name=drift_probe'], { DRIZZLE_OUT: `./${scratch}` });
  const output = `${generate.stdout}${generate.stderr}`;
  // drizzle-kit exits 0 even when it fails, so its words are checked too.
  const saidNothingToDo = output.includes('No schema changes');
  const wroteMigration = /Your SQL migration file/.test(output);
  if (generate.status !== 0 || (!saidNothingToDo && !wroteMigration)) {
    problems.push(`[${dialect}] drizzle-kit generate failed:\n${generate.stdout}${generate.stderr}`);
  } else {
    const before = listFiles(folder);
    const after = listFiles(scratch);
    const added = after.filter((f) => !before.includes(f));
    const changed = before.filter(
      (f) => after.includes(f) && !fs.readFileSync(path.join(folder, f)).equals(fs.readFileSync(path.join(scratch, f))),
    );
    if (added.length > 0 || changed.length > 0) {
      const sql = added.filter((f) => f.endsWith('.sql')).map((f) => fs.readFileSync(path.join(scratch, f), 'utf8'));
      problems.push(
        `[${dialect}] src/schema/${dialect}.ts and drizzle/${dialect} have drifted apart ` +
          `(new: ${added.join(', ') || 'none'}; changed: ${changed.join(', ') || 'none'}).\n` +
          `Run \`npm run db:generate -- --name=<what_changed>\`, read the SQL, and commit it. Pending SQL:\n${sql.join('\n')}`,
      );
    }
  }
  fs.rmSync(scratch, { recursive: true, force: true });
  console.log(`[${dialect}] checked`);
}

if (problems.length > 0) {
  console.error(`\nMigration check failed:\n\n${problems.join('\n\n')}`);
  process.exitCode = 1;
} else {
  console.log('Schemas and migrations agree.');
}
