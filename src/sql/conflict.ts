/** INSERT conflict tails (Spelling.onConflict) as SQLite and Postgres spell them; MySQL's are in its spelling.ts. */
import { type SQL, sql } from 'drizzle-orm';

/** `ON CONFLICT (keys) DO NOTHING | DO UPDATE SET c = excluded.c, …`; column names come from our code. */
export function standardOnConflict(keys: readonly string[], update: readonly string[] = [], anyKey = false): SQL {
  const target = anyKey ? '' : ` (${keys.join(', ')})`;
  if (update.length === 0) return sql.raw(`ON CONFLICT${target} DO NOTHING`);
  return sql.raw(`ON CONFLICT${target} DO UPDATE SET ${update.map((c) => `${c} = excluded.${c}`).join(', ')}`);
}
