#!/usr/bin/env node
/**
 * hermes-sessiondb: the operator's CLI. Commands: migrate, status, import, copy, verify, search, stats,
 * export, prune (one file each in ./commands). Exit codes: 0 ok; 1 failure: a database or file that is missing,
 * not migrated or unreachable, a failed verification; 2 the command line is wrong or needs a flag (usage,
 * bad URL, --merge). Only migrate, import, copy and prune write; the other commands never create or migrate
 * a database.
 */
import fs from 'node:fs';
import { pathToFileURL } from 'node:url';
import { Command, CommanderError } from 'commander';
import { SessionDbError } from '../errors.js';
import { type CliContext, type CliIo, UsageError } from './shared.js';

export { type CliIo, DEFAULT_DB } from './shared.js';

type Register = (program: Command, cli: CliContext) => void;

/**
 * In the order --help lists them. Each command's file is loaded when it runs (or for the help that lists
 * them all): `--version` and a single command load no other command's module.
 */
const COMMANDS: Record<string, () => Promise<Register>> = {
  migrate: async () => (await import('./commands/migrate.js')).migrateCommand,
  status: async () => (await import('./commands/status.js')).statusCommand,
  import: async () => (await import('./commands/import.js')).importCommand,
  copy: async () => (await import('./commands/copy.js')).copyCommand,
  verify: async () => (await import('./commands/verify.js')).verifyCommand,
  search: async () => (await import('./commands/search.js')).searchCommand,
  stats: async () => (await import('./commands/stats.js')).statsCommand,
  export: async () => (await import('./commands/export.js')).exportCommand,
  prune: async () => (await import('./commands/prune.js')).pruneCommand,
};

/**
 * The commands `argv` needs registered: the one it names; none for a bare `--version`; every one otherwise
 * (no command, help, or a name commander will refuse while listing the commands).
 */
function commandsFor(argv: string[]): string[] {
  for (let i = 0; i < argv.length; i++) {
    const token = argv[i]!;
    if (token === '--schema')
      i++; // the global option's value
    else if (!token.startsWith('-')) return Object.hasOwn(COMMANDS, token) ? [token] : Object.keys(COMMANDS);
  }
  const versionOnly =
    argv.some((t) => t === '-V' || t === '--version') && !argv.some((t) => t === '-h' || t === '--help');
  return versionOnly ? [] : Object.keys(COMMANDS);
}

const processIo: CliIo = {
  out: (t) => process.stdout.write(t),
  write: (t) =>
    new Promise((resolve, reject) => process.stdout.write(t, (error) => (error ? reject(error) : resolve()))),
  err: (t) => process.stderr.write(t),
  errIsTTY: process.stderr.isTTY === true,
};

/** The package's version, read from package.json next to src/ (tsx) or dist/ (installed). */
function packageVersion(): string {
  const file = new URL('../../package.json', import.meta.url);
  const { version } = JSON.parse(fs.readFileSync(file, 'utf8')) as { version?: unknown };
  if (typeof version !== 'string') throw new Error(`no version in ${file.pathname}`);
  return version;
}

/** The exit code of an error a command threw (commander's own included). */
function exitCodeOf(error: unknown, io: CliIo): number {
  if (error instanceof CommanderError) {
    // --help and --version exit with 0; everything else commander rejects is a usage error.
    return error.exitCode === 0 ? 0 : 2;
  }
  if (error instanceof UsageError) {
    io.err(`error: ${error.message}\n`);
    return 2;
  }
  if (error instanceof SessionDbError) {
    io.err(`error: ${error.message}\n`);
    return error.code === 'VALIDATION' || error.code === 'INVALID_URL' ? 2 : 1;
  }
  io.err(`error: ${error instanceof Error ? error.message : String(error)}\n`);
  return 1;
}

export async function main(argv: string[], io: CliIo = processIo): Promise<number> {
  let exitCode = 0;
  const program = new Command()
    .name('hermes-sessiondb')
    .description(
      'Operate hermes-sessiondb stores: migrate, import Hermes state.db files, copy between stores, verify, search, report, export, prune.',
    )
    .version(packageVersion(), '-V, --version', 'print the version of hermes-sessiondb')
    .option(
      '--schema <name>',
      'Postgres/PGlite: the schema the store lives in (openStore option schema; default public)',
    )
    .exitOverride()
    .configureOutput({ writeOut: io.out, writeErr: io.err })
    .showHelpAfterError()
    .addHelpText(
      'after',
      '\nExit codes: 0 ok; 1 failed (a database or file missing, not migrated or unreachable; verification failed); ' +
        '2 usage error (bad arguments or URL, or a refusal a flag can lift, e.g. --merge).\n' +
        'Only migrate, import, copy and prune write; status, verify, search, stats and export never create or migrate a database.',
    );
  const cli: CliContext = {
    io,
    schema: () => program.opts<{ schema?: string }>().schema,
    fail: () => {
      exitCode = 1;
    },
  };
  // Registered through program.command(), so each inherits exitOverride, the output and showHelpAfterError.
  for (const register of await Promise.all(commandsFor(argv).map((name) => COMMANDS[name]!()))) register(program, cli);

  if (argv.length === 0) {
    io.err(program.helpInformation());
    return 2;
  }
  try {
    await program.parseAsync(argv, { from: 'user' });
  } catch (error) {
    exitCode = exitCodeOf(error, io);
  }
  return exitCode;
}

// Run when executed (the bin, or `node dist/cli/main.js`), not when imported by tests.
const invoked = process.argv[1] ? pathToFileURL(fs.realpathSync(process.argv[1])).href : '';
if (import.meta.url === invoked) process.exitCode = await main(process.argv.slice(2));
