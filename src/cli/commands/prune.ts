import type { Command } from 'commander';
import { openStore } from '../lazy.js';
import { type CliContext, dbOption, nonNegative } from '../shared.js';
import { inSchema, using } from '../stores.js';

/** `prune`: delete ended sessions older than N days, or count them with --dry-run. */
export function pruneCommand(program: Command, cli: CliContext): Command {
  const { io } = cli;
  return program
    .command('prune')
    .description('delete ended sessions older than N days (live sessions are never pruned)')
    .requiredOption('--older-than <days>', 'age in days', nonNegative('--older-than'))
    .addOption(dbOption())
    .option('--source <source>', 'only sessions of this source')
    .option('--dry-run', 'count what would be deleted, delete nothing')
    .addHelpText(
      'after',
      '\nExamples:\n  hermes-sessiondb prune --older-than 90 --dry-run\n  hermes-sessiondb prune --older-than 30 --source cron',
    )
    .action(async (o: { db: string; olderThan: number; source?: string; dryRun?: boolean }) => {
      // Nothing to prune in a store that is not there: a missing database is an error, never created.
      await using(await openStore(o.db, { mustExist: true, ...inSchema(o.db, cli.schema()) }), async (store) => {
        if (o.dryRun) {
          const n = await store.sessions.countPrunable(o.olderThan, o.source ?? null);
          io.out(`would prune ${n} session${n === 1 ? '' : 's'} (dry run; nothing deleted)\n`);
        } else {
          const n = await store.pruneSessions({ olderThanDays: o.olderThan, source: o.source ?? null });
          io.out(`pruned ${n} session${n === 1 ? '' : 's'}\n`);
        }
      });
    });
}
