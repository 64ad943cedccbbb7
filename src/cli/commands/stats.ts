import type { Command } from 'commander';
import { fmt } from '../progress.js';
import { type CliContext, dbOption } from '../shared.js';
import { readingStore } from '../stores.js';

/** `stats`: sessions, messages, tokens and cost by model and source, and the database size. */
export function statsCommand(program: Command, cli: CliContext): Command {
  const { io } = cli;
  return program
    .command('stats')
    .description('sessions, messages, tokens and cost by model and source, database size')
    .addOption(dbOption())
    .option('--json', 'print JSON')
    .action(async (o: { db: string; json?: boolean }) => {
      await readingStore(o.db, cli.schema(), async (store) => {
        const s = await store.maintenance.stats();
        if (o.json) {
          io.out(`${JSON.stringify(s, null, 2)}\n`);
          return;
        }
        io.out(
          `${store.url}\n  sessions ${fmt(s.sessions)}, messages ${fmt(s.messages)}, database ${fmt(Math.round(s.databaseBytes / 1024))} KiB\n`,
        );
        for (const [label, groups] of [
          ['model', s.byModel],
          ['source', s.bySource],
        ] as const) {
          io.out(`\n  by ${label}:\n`);
          for (const g of groups) {
            io.out(
              `    ${(g.key ?? '(none)').padEnd(32)} ${String(g.sessions).padStart(6)} sessions ${String(g.messages).padStart(8)} msgs ` +
                `${fmt(g.inputTokens).padStart(12)} in ${fmt(g.outputTokens).padStart(10)} out  $${g.estimatedCostUsd.toFixed(4)} est  $${g.actualCostUsd.toFixed(4)} actual\n`,
            );
          }
        }
      });
    });
}
