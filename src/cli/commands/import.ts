import fs from 'node:fs';
import { type Command, Option } from 'commander';
import { parseStoreUrl } from '../../db/url.js';
import { importFromSource, openHermesFile } from '../lazy.js';
import { fmt, progressPrinter } from '../progress.js';
import {
  type CliContext,
  mergeOption,
  NotReadyError,
  nulOption,
  rate,
  type TransferFlags,
  transferOptions,
  verdict,
} from '../shared.js';
import { withStore } from '../stores.js';

/** `import`: copy a Hermes state.db into a store (read through a snapshot), then verify. */
export function importCommand(program: Command, cli: CliContext): Command {
  const { io } = cli;
  return program
    .command('import')
    .description('copy a Hermes state.db into a store (the file is only read, through a private snapshot), then verify')
    .argument('<state.db>', 'the Hermes database file (any schema version from 6 on)')
    .addOption(new Option('--to <url>', 'the store to import into').makeOptionMandatory())
    .addOption(mergeOption())
    .addOption(nulOption())
    .option('--no-verify', 'skip comparing the file with the store afterwards')
    .addHelpText(
      'after',
      '\nExamples:\n  hermes-sessiondb import ~/.hermes/state.db --to sqlite:./sessions.db\n  hermes-sessiondb import ./state.db --to postgres://app@127.0.0.1:5432/sessions\n\nRunning it again adds only what is missing (ids are kept). Exit code 1 when verification fails.',
    )
    .action(async (file: string, o: TransferFlags & { to: string }) => {
      const started = performance.now();
      parseStoreUrl(o.to); // a malformed target is a usage error before the (possibly long) snapshot
      // The source first, so a missing or unreadable file never creates the target.
      if (!fs.existsSync(file)) throw new NotReadyError(`Cannot import ${file}: no such file`);
      const source = await openHermesFile(file);
      try {
        await withStore(o.to, cli.schema(), async (store) => {
          const progress = progressPrinter(io.err, io.errIsTTY === true);
          const report = await importFromSource(
            source,
            store,
            { ...transferOptions(o), verify: o.verify, onProgress: progress.update },
            started,
          );
          progress.finish();
          for (const c of report.unknownColumns) {
            io.err(`note: ${c.table}.${c.column} is not carried over (${fmt(c.rowsWithValue)} rows hold a value)\n`);
          }
          for (const t of report.unknownTables)
            io.err(`note: table ${t.table} is not carried over (${fmt(t.rows)} rows)\n`);
          if (report.orphanSessions.length > 0) {
            io.err(
              `note: ${fmt(report.orphanSessions.length)} session(s) referenced by messages but missing from the file were created as stubs (source "unknown")\n`,
            );
          }
          if (report.nulReplaced > 0)
            io.err(`note: NUL characters replaced with U+FFFD in ${fmt(report.nulReplaced)} row(s)\n`);
          if (report.ftsDamageIgnored.length > 0)
            io.err(`note: the file's FTS index is damaged; the store indexes afresh\n`);
          io.out(
            `Imported ${fmt(report.sessions)} sessions, ${fmt(report.messages)} messages in ${report.seconds.toFixed(1)} s ` +
              `(${rate(report.messages, report.seconds)} msg/s) into ${store.url}${verdict(cli, report.verification)}\n`,
          );
        });
      } finally {
        source.close();
      }
    });
}
