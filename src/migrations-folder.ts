/** The package's own migration folders, for drizzle-kit's `out`/`migrations` settings or drizzle-orm's `migrate()`. */
import { z } from 'zod';
import { defaultMigrationsFolder, type Dialect } from './db/migrations.js';
import { ValidationError } from './errors.js';

const dialectSchema = z.enum(['pg', 'sqlite']);

/**
 * Absolute path of the migrations this version ships for a dialect (the folder holding `meta/_journal.json`),
 * inside the installed package.
 */
export function migrationsFolder(dialect: Dialect): string {
  const parsed = dialectSchema.safeParse(dialect);
  if (!parsed.success) {
    const got = typeof dialect === 'string' ? JSON.stringify(dialect) : typeof dialect;
    throw new ValidationError('dialect', `must be "pg" or "sqlite", got ${got}`, { cause: parsed.error });
  }
  return defaultMigrationsFolder(parsed.data);
}
