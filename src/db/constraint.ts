/** Recognising constraint violations from any engine's driver, through Drizzle's DrizzleQueryError wrapper. */
import { engines } from './engines.js';

export type ConstraintKind = 'foreign-key' | 'unique';

/** Every engine's driver error codes for a violated constraint. */
const CODES: Record<string, ConstraintKind> = Object.assign({}, ...engines.map((e) => e.constraintCodes));

export function constraintViolation(error: unknown): ConstraintKind | undefined {
  for (let e = error, depth = 0; e && typeof e === 'object' && depth < 5; depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string') {
      const kind = CODES[code];
      if (kind) return kind;
    }
    e = (e as { cause?: unknown }).cause;
  }
  return undefined;
}
