/** Recognising constraint violations from either driver, through Drizzle's DrizzleQueryError wrapper. */

export type ConstraintKind = 'foreign-key' | 'unique';

const PG_CODES: Record<string, ConstraintKind> = { '23503': 'foreign-key', '23505': 'unique' };
const SQLITE_CODES: Record<string, ConstraintKind> = {
  SQLITE_CONSTRAINT_FOREIGNKEY: 'foreign-key',
  SQLITE_CONSTRAINT_UNIQUE: 'unique',
  SQLITE_CONSTRAINT_PRIMARYKEY: 'unique',
};

export function constraintViolation(error: unknown): ConstraintKind | undefined {
  for (let e = error, depth = 0; e && typeof e === 'object' && depth < 5; depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string') {
      const kind = PG_CODES[code] ?? SQLITE_CODES[code];
      if (kind) return kind;
    }
    e = (e as { cause?: unknown }).cause;
  }
  return undefined;
}
