import type { Command } from 'commander';
import { type CliContext, dbOption } from '../shared.js';
import { withStore } from '../stores.js';

/** `migrate`: apply pending migrations (creating the store if it is missing). */
export function migrateCommand(program: Command, cli: CliContext): Command {
  return program
    .command('migrate')
    .description('apply pending migrations and print what was applied')
    .addOption(dbOption())
    .addHelpText(
      'after',
      '\nExamples:\n  hermes-sessiondb migrate\n  hermes-sessiondb migrate --db postgres://app@127.0.0.1:5432/sessions',
    )
    .action(async (o: { db: string }) => {
      await withStore(
        o.db,
        cli.schema(),
        async (store) => {
          const report = await store.migrate();
          cli.io.out(
            report.applied.length === 0
              ? `${store.url}: up to date (${report.total} migrations).\n`
              : `${store.url}: applied ${report.applied.join(', ')} (${report.total} migrations in all).\n`,
          );
        },
        false,
      );
    });
}
