/**
 * postgres.js 3.4.9 runs an array-type query first on every new connection and drops its promise
 * (porsager/postgres #1192, #1223): when that query fails (the connection is terminated while it starts up,
 * a statement timeout shorter than the query, no right to read pg_type), the rejection is unhandled. No
 * caller can catch it, and `fetch_types: false` is no way out: it makes reserve() on a new connection wait
 * forever (#751, #1219), and every transaction of ours reserves a connection.
 */

/** Whether `error` is that dropped rejection: postgres.js attaches the failed query's text to it. */
export function isPostgresJsTypeQueryRejection(error: unknown): boolean {
  const query = error && typeof error === 'object' ? (error as { query?: unknown }).query : undefined;
  return typeof query === 'string' && /select b\.oid, b\.typarray\s+from pg_catalog\.pg_type a/.test(query);
}

/**
 * A pg_stat_activity condition for backends past their startup and past that query: a test that
 * terminates connections picks its victims with it, so that it never makes the type query fail.
 */
export const PAST_STARTUP_SQL =
  "state IN ('idle', 'active', 'idle in transaction') AND query <> '' AND query NOT LIKE '%b.typarray%'";
