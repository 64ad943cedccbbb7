import type { Command } from 'commander';
import { openStore } from '../lazy.js';
import { type CliContext, dbOption } from '../shared.js';
import { inSchema, placeOf, readsAsFile, using } from '../stores.js';

/** `status`: the applied and pending migrations of a store, which it never creates or migrates. */
export function statusCommand(program: Command, cli: CliContext): Command {
  return program
    .command('status')
    .description('list applied and pending migrations')
    .addOption(dbOption())
    .addHelpText('after', '\nExample:\n  hermes-sessiondb status --db pglite:./pgdata')
    .action(async (o: { db: string }) => {
      // Never creates a file or directory; on a server an empty database is reported (all pending), not refused.
      const mustExist = placeOf(o.db).kind !== 'server';
      const options = { migrate: false, mustExist, readonly: readsAsFile(o.db), ...inSchema(o.db, cli.schema()) };
      await using(await openStore(o.db, options), async (store) => {
        const s = await store.migrationStatus();
        cli.io.out(
          `${store.url}\n  applied: ${s.applied.join(', ') || 'none'}\n  pending: ${s.pending.join(', ') || 'none'}\n`,
        );
        if (s.unknownHashes.length > 0) cli.io.out(`  unknown (from a newer version): ${s.unknownHashes.length}\n`);
        if (s.pending.length > 0 && s.unknownHashes.length === 0)
          cli.io.out(`  apply them with: hermes-sessiondb migrate --db ${store.url}\n`);
      });
    });
}
