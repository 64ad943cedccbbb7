/** Escape a user string for a LIKE pattern with `\` as the escape character (Hermes' rule: \, %, _). */
export function escapeLike(value: string): string {
  return value.replace(/\\/g, '\\\\').replace(/%/g, '\\%').replace(/_/g, '\\_');
}
