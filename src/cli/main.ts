#!/usr/bin/env node
/**
 * hermes-sessiondb: the operator's CLI. This first cut migrates and reports migration status; import,
 * copy, verify, search, stats, export and prune arrive with the CLI issue.
 */
import { parseArgs } from 'node:util';
import { SessionDbError } from '../errors.js';
import { openStore } from '../open.js';

const DEFAULT_DB = 'sqlite:./hermes-sessiondb.db';

const HELP = `Usage: hermes-sessiondb <command> [--db URL]

Commands:
  migrate   apply pending migrations and print what was applied
  status    list applied and pending migrations

Options:
  --db URL  the store (default ${DEFAULT_DB}, an SQLite file in the working directory).
            Forms: sqlite:<path>, :memory:, postgres://user@host/db, pglite:<dir>, pglite:memory
  -h, --help

Examples:
  hermes-sessiondb migrate
  hermes-sessiondb migrate --db postgres://app@127.0.0.1:5432/sessions
  hermes-sessiondb status --db pglite:./pgdata`;

export async function main(argv: string[]): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      options: { db: { type: 'string' }, help: { type: 'boolean', short: 'h' } },
    });
  } catch (error) {
    console.error(`${(error as Error).message}\n\n${HELP}`);
    return 2;
  }
  const [command] = parsed.positionals;
  if (parsed.values.help || !command) {
    console.log(HELP);
    return parsed.values.help ? 0 : 2;
  }
  if (command !== 'migrate' && command !== 'status') {
    console.error(`Unknown command "${command}".\n\n${HELP}`);
    return 2;
  }
  const url = parsed.values.db ?? DEFAULT_DB;
  try {
    const store = await openStore(url, { migrate: false });
    try {
      if (command === 'migrate') {
        const report = await store.migrate();
        console.log(
          report.applied.length === 0
            ? `${store.url}: up to date (${report.total} migrations).`
            : `${store.url}: applied ${report.applied.join(', ')} (${report.total} migrations in all).`,
        );
      } else {
        const status = await store.migrationStatus();
        console.log(`${store.url}\n  applied: ${status.applied.join(', ') || 'none'}\n  pending: ${status.pending.join(', ') || 'none'}`);
        if (status.unknownHashes.length > 0) console.log(`  unknown (from a newer version): ${status.unknownHashes.length}`);
      }
    } finally {
      await store.close();
    }
    return 0;
  } catch (error) {
    console.error(error instanceof SessionDbError ? `error: ${error.message}` : error);
    return 1;
  }
}

process.exitCode = await main(process.argv.slice(2));
