import { type Command, Option } from 'commander';
import { parseStoreUrl } from '../../db/url.js';
import type { RowSource } from '../../transfer/sources.js';
import { openHermesFile, storeSource, verifyTransfer } from '../lazy.js';
import { fmt } from '../progress.js';
import type { CliContext, SideSchemas } from '../shared.js';
import { isHermesFile, openSourceStore, readingStore } from '../stores.js';

/** The `--from` side of verify: a Hermes file (through a snapshot) or a store (only read). */
async function openSource(url: string, schema?: string): Promise<{ source: RowSource; close(): Promise<void> }> {
  const hermes = await isHermesFile(url);
  if (hermes) {
    const file = await openHermesFile(hermes);
    return { source: file, close: async () => file.close() };
  }
  const store = await openSourceStore(url, schema);
  return { source: await storeSource(store), close: () => store.close() };
}

/** `verify`: compare a store with its source (a store or a Hermes state.db); exit 1 when they differ. */
export function verifyCommand(program: Command, cli: CliContext): Command {
  const { io } = cli;
  return program
    .command('verify')
    .description(
      'compare a store with its source: sessions, message counts, content digests, meta, topics, search spot-checks',
    )
    .addOption(
      new Option(
        '--from <url>',
        'the source: a store, or a Hermes state.db (read through a snapshot)',
      ).makeOptionMandatory(),
    )
    .addOption(new Option('--to <url>', 'the store to check').makeOptionMandatory())
    .option('--from-schema <name>', 'Postgres/PGlite: the schema of a --from store (default: --schema)')
    .option('--to-schema <name>', 'Postgres/PGlite: the schema of the --to store (default: --schema)')
    .addHelpText(
      'after',
      '\nExamples:\n  hermes-sessiondb verify --from ~/.hermes/state.db --to postgres://app@127.0.0.1:5432/sessions\n  hermes-sessiondb verify --from sqlite:./sessions.db --to pglite:./pgdata\n\nExit code 1 when they differ.',
    )
    .action(async (o: SideSchemas & { from: string; to: string }) => {
      parseStoreUrl(o.to); // a malformed target is a usage error before the source is opened
      const from = await openSource(o.from, o.fromSchema ?? cli.schema());
      const toSchema = o.toSchema ?? cli.schema();
      try {
        await readingStore(o.to, toSchema, async (to) => {
          const r = await verifyTransfer(from.source, to);
          io.out(
            `sessions ${fmt(r.sessions.from)} / ${fmt(r.sessions.to)}, messages ${fmt(r.messages.from)} / ${fmt(r.messages.to)}, ` +
              `search spot-checks ${r.spotChecks.filter((c) => c.same).length}/${r.spotChecks.length}\n`,
          );
          for (const p of r.problems) io.out(`  ${p}\n`);
          io.out(r.ok ? 'verified: the stores agree.\n' : 'verification failed.\n');
          if (!r.ok) cli.fail();
        });
      } finally {
        await from.close();
      }
    });
}
