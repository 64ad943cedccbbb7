import path from 'node:path';
import { type Command, Option } from 'commander';
import { redactUrl } from '../../db/url.js';
import { copyStore } from '../lazy.js';
import { fmt, progressPrinter } from '../progress.js';
import {
  type CliContext,
  mergeOption,
  nulOption,
  rate,
  type SideSchemas,
  type TransferFlags,
  transferOptions,
  UsageError,
  verdict,
} from '../shared.js';
import { isHermesFile, openSourceStore, placeOf, withStore } from '../stores.js';

/** Two URLs naming the same database (an in-memory store is never shared). */
function sameStore(a: string, b: string): boolean {
  const identity = (url: string) => {
    const place = placeOf(url);
    if (place.kind === 'memory') return null;
    return place.kind === 'server' ? place.url : `${place.kind}:${path.resolve(place.path)}`;
  };
  const x = identity(a);
  return x !== null && x === identity(b);
}

/** `copy`: every row of one store into another (any backends), then verify. */
export function copyCommand(program: Command, cli: CliContext): Command {
  const { io } = cli;
  return program
    .command('copy')
    .description(
      'copy every session, message, meta and topic row from one store into another (any backends), then verify',
    )
    .addOption(new Option('--from <url>', 'the store to copy from (only read)').makeOptionMandatory())
    .addOption(new Option('--to <url>', 'the store to copy into (migrated first)').makeOptionMandatory())
    .option('--from-schema <name>', 'Postgres/PGlite: the schema of the --from store (default: --schema)')
    .option('--to-schema <name>', 'Postgres/PGlite: the schema of the --to store (default: --schema)')
    .addOption(mergeOption())
    .addOption(nulOption())
    .option('--no-verify', 'skip comparing the stores afterwards')
    .addHelpText(
      'after',
      '\nExamples:\n  hermes-sessiondb copy --from sqlite:./sessions.db --to postgres://app@127.0.0.1:5432/sessions\n  hermes-sessiondb copy --from postgres://app@db/sessions --to sqlite:./backup.db\n\nIds and timestamps are kept; running it again adds only what is missing. Exit code 1 when verification fails.',
    )
    .action(async (o: TransferFlags & SideSchemas & { from: string; to: string }) => {
      const fromSchema = o.fromSchema ?? cli.schema();
      const toSchema = o.toSchema ?? cli.schema();
      if (sameStore(o.from, o.to) && (fromSchema ?? 'public') === (toSchema ?? 'public')) {
        throw new UsageError(`--from and --to name the same store (${redactUrl(o.to)})`);
      }
      if (await isHermesFile(o.from))
        throw new UsageError(
          `${o.from} is a Hermes state.db, not a store; use: hermes-sessiondb import ${o.from} --to ${o.to}`,
        );
      // The source first, so a missing one never creates the target.
      const from = await openSourceStore(o.from, fromSchema);
      try {
        await withStore(o.to, toSchema, async (to) => {
          const progress = progressPrinter(io.err, io.errIsTTY === true);
          const report = await copyStore(from, to, {
            ...transferOptions(o),
            verify: o.verify,
            onProgress: progress.update,
          });
          progress.finish();
          if (report.nulReplaced > 0)
            io.err(`note: NUL characters replaced with U+FFFD in ${fmt(report.nulReplaced)} row(s)\n`);
          io.out(
            `Copied ${fmt(report.sessions)} sessions, ${fmt(report.messages)} messages in ${report.seconds.toFixed(1)} s ` +
              `(${rate(report.messages, report.seconds)} msg/s) from ${from.url} into ${to.url}${verdict(cli, report.verification)}\n`,
          );
        });
      } finally {
        await from.close();
      }
    });
}
