import type { Command } from 'commander';
import { type CliContext, dbOption } from '../shared.js';
import { withStore } from '../stores.js';

/**
 * `migrate`: apply pending migrations (creating the store if it is missing), then index for search what the
 * migrations queued (Postgres' block index after 0010), so the first search does not build it.
 */
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
          const started = performance.now();
          await store.imports.indexForSearch();
          const seconds = (performance.now() - started) / 1000;
          if (seconds >= 1) cli.io.out(`${store.url}: search index brought up to date in ${seconds.toFixed(1)} s.\n`);
        },
        false,
      );
    });
}
