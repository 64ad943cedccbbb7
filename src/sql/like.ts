/** Escape a user string for a LIKE pattern with `\` as the escape character (Hermes' rule: \, %, _). */
export function escapeLike(value: string): string {
  return value.replace(/\\/g, '\\\\').replace(/%/g, '\\%').replace(/_/g, '\\_');
}

/** A LIKE pattern matching `value` anywhere (use with ESCAPE '\'). */
export function containsPattern(value: string): string {
  return `%${escapeLike(value)}%`;
}
