import fs from 'node:fs';
import path from 'node:path';
import { finished } from 'node:stream/promises';
import type { Command } from 'commander';
import { writeHermesExport } from '../lazy.js';
import { type CliContext, dbOption, UsageError } from '../shared.js';
import { readingStore } from '../stores.js';

/**
 * Stream into `file` through a temporary sibling renamed over it at the end, so a failed export leaves
 * an earlier file as it was; a target that is not a regular file (a pipe, /dev/stdout) is written directly.
 * New files are mode 0600; a replaced file keeps its mode.
 */
async function writeFileStreamed<T>(
  file: string,
  body: (write: (chunk: string) => Promise<void>) => Promise<T>,
): Promise<T> {
  const existing = fs.statSync(file, { throwIfNoEntry: false });
  const direct = existing !== undefined && !existing.isFile();
  const target = direct ? file : path.join(path.dirname(file), `.${path.basename(file)}.${process.pid}.partial`);
  let fd: number;
  try {
    fd = fs.openSync(target, 'w', 0o600);
  } catch (error) {
    throw new Error(`cannot write ${file}: ${error instanceof Error ? error.message : String(error)}`, {
      cause: error,
    });
  }
  const stream = fs.createWriteStream(target, { fd });
  stream.on('error', () => {}); // reported through the write callbacks and `finished`
  try {
    const result = await body(
      (chunk) => new Promise((resolve, reject) => stream.write(chunk, (error) => (error ? reject(error) : resolve()))),
    );
    stream.end();
    await finished(stream);
    if (!direct) {
      if (existing) fs.chmodSync(target, existing.mode & 0o777);
      fs.renameSync(target, file);
    }
    return result;
  } catch (error) {
    stream.destroy();
    if (!direct) fs.rmSync(target, { force: true });
    throw error;
  }
}

/** `export`: sessions as JSON lines in Hermes' export_session shape, to standard output or a file. */
export function exportCommand(program: Command, cli: CliContext): Command {
  const { io } = cli;
  return program
    .command('export')
    .description("write sessions as JSON lines in Hermes' export_session shape (snake_case)")
    .addOption(dbOption())
    .option('--session <id>', 'only this session')
    .option('--source <source>', 'only sessions of this source')
    .option('--out <file>', 'write to a file instead of standard output')
    .addHelpText(
      'after',
      '\nExamples:\n  hermes-sessiondb export > sessions.jsonl\n  hermes-sessiondb export --session 20261031_191200_f8952e',
    )
    .action(async (o: { db: string; session?: string; source?: string; out?: string }) => {
      await readingStore(o.db, cli.schema(), async (store) => {
        if (o.session && (await store.getSession(o.session)) === null)
          throw new UsageError(`no session ${JSON.stringify(o.session)} in ${store.url}`);
        // Streamed a page at a time: an export of any size never has to fit in memory or in one string.
        const options = o.session ? { sessionId: o.session } : { source: o.source ?? null };
        const { sessions } = o.out
          ? await writeFileStreamed(o.out, (write) => writeHermesExport(store, write, options))
          : await writeHermesExport(store, io.write ?? io.out, options);
        io.err(`exported ${sessions} session${sessions === 1 ? '' : 's'}\n`);
      });
    });
}
