/** The package's own migration folders, for drizzle-kit's `out`/`migrations` settings or drizzle-orm's `migrate()`. */
import { z } from 'zod';
import { DIALECT_NAMES, type DialectName, defaultMigrationsFolder } from './db/migrations.js';
import { ValidationError } from './errors.js';

const dialectSchema = z.enum(DIALECT_NAMES);

/**
 * Absolute path of the migrations this version ships for a dialect (the folder holding `meta/_journal.json`),
 * inside the installed package.
 */
export function migrationsFolder(dialect: DialectName): string {
  const parsed = dialectSchema.safeParse(dialect);
  if (!parsed.success) {
    const got = typeof dialect === 'string' ? JSON.stringify(dialect) : typeof dialect;
    const names = DIALECT_NAMES.map((name) => `"${name}"`).join(', ');
    throw new ValidationError('dialect', `must be one of ${names}, got ${got}`, { cause: parsed.error });
  }
  return defaultMigrationsFolder(parsed.data);
}
