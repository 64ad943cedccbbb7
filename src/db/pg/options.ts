/** The openStore options only a Postgres or PGlite store takes (openStoreOptionsSchema, src/open.ts, holds them with the rest). */
import type { ConnectionOptions as TlsConnectionOptions } from 'node:tls';
import { z } from 'zod';
import { schemaName } from '../../sql/tables.js';

export const pgOpenOptions = {
  /**
   * postgres:// only: postgres.js' `ssl` option as it takes it: true, false, 'require', 'allow', 'prefer',
   * 'verify-full', or a tls.connect() options object (ca, cert, key, rejectUnauthorized, servername, …).
   * Unset: the URL's `sslmode` (else no TLS).
   */
  ssl: z
    .union([
      z.boolean(),
      z.enum(['require', 'allow', 'prefer', 'verify-full']),
      z.custom<TlsConnectionOptions>((value) => typeof value === 'object' && value !== null && !Array.isArray(value), {
        error: "must be a boolean, 'require', 'allow', 'prefer', 'verify-full' or a tls.connect() options object",
      }),
    ])
    .optional(),
  /**
   * postgres:// only: statement_timeout in ms for the store's connections, in the startup message (0 = no
   * timeout). Unset: the server's, database's or role's default. Migrations are exempt.
   */
  statementTimeoutMs: z.number().int().min(0).max(2_147_483_647).optional(),
  /**
   * Accepted and without effect: any LC_CTYPE is served, 'C' included, since search tokenizes in the library
   * (migration 0010). It used to open an LC_CTYPE 'C' database, refused otherwise, with a warning.
   */
  allowAsciiOnlyCtype: z.boolean().default(false),
  /**
   * Postgres only: the schema holding every table, function, index, trigger and sequence of the store, and its
   * migration history (created if missing). Default: the tables in `public`, as every store had before. Runtime
   * SQL names the schema explicitly, so the connection's search_path does not matter. Refused on SQLite.
   */
  schema: schemaName.optional(),
};
