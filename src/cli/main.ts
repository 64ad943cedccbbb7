#!/usr/bin/env node
/**
 * hermes-sessiondb: the operator's CLI. Commands: migrate, status, import, copy, verify, search, stats,
 * export, prune. Exit codes: 0 ok; 1 failure: a database or file that is missing, not migrated or unreachable,
 * a failed verification; 2 the command line is wrong or needs a flag (usage, bad URL, --merge).
 * Only migrate, import, copy and prune write; the other commands never create or migrate a database.
 */
import fs from 'node:fs';
import path from 'node:path';
import { finished } from 'node:stream/promises';
import { pathToFileURL } from 'node:url';
import { Command, CommanderError, Option } from 'commander';
import type { writeHermesExport as WriteHermesExport } from '../codecs/hermes-export.js';
import { parseStoreUrl, redactUrl } from '../db/url.js';
import type { openStore as OpenStore } from '../open.js';
import type { copyStore as CopyStore } from '../transfer/copy.js';
import type { importFromSource as ImportFromSource } from '../transfer/hermes-import.js';
import type { TransferOptions } from '../transfer/pipeline.js';
import type { HermesFileSource, RowSource } from '../transfer/sources.js';
import type { VerifyReport, verifyTransfer as VerifyTransfer } from '../transfer/verify.js';
import { fmt, progressPrinter } from './progress.js';
import { SessionDbError, StoreNotFoundError } from '../errors.js';
import type { SessionStore } from '../store.js';
import type { SearchSort } from '../types.js';

// The library (drivers, schemas, validation) is loaded when a command runs: --help, --version and a usage
// error load none of it, and start as fast as node itself.
const openStore = async (...args: Parameters<typeof OpenStore>) => (await import('../open.js')).openStore(...args);
const copyStore = async (...args: Parameters<typeof CopyStore>) =>
  (await import('../transfer/copy.js')).copyStore(...args);
const importFromSource = async (...args: Parameters<typeof ImportFromSource>) =>
  (await import('../transfer/hermes-import.js')).importFromSource(...args);
const verifyTransfer = async (...args: Parameters<typeof VerifyTransfer>) =>
  (await import('../transfer/verify.js')).verifyTransfer(...args);
const writeHermesExport = async (...args: Parameters<typeof WriteHermesExport>) =>
  (await import('../codecs/hermes-export.js')).writeHermesExport(...args);
const openHermesFile = async (file: string): Promise<HermesFileSource> =>
  (await import('../transfer/sources.js')).HermesFileSource.open(file);
const storeSource = async (store: SessionStore): Promise<RowSource> =>
  (await import('../transfer/sources.js')).storeSource(store);

export const DEFAULT_DB = 'sqlite:./hermes-sessiondb.db';

export interface CliIo {
  out(text: string): void;
  err(text: string): void;
  /** Standard error is a terminal: progress is drawn as a bar rather than printed as lines. */
  errIsTTY?: boolean;
  /** Like out, resolving once more may follow (large output waits for the reader); out when absent. */
  write?(text: string): Promise<void>;
}

const processIo: CliIo = {
  out: (t) => process.stdout.write(t),
  write: (t) =>
    new Promise((resolve, reject) => process.stdout.write(t, (error) => (error ? reject(error) : resolve()))),
  err: (t) => process.stderr.write(t),
  errIsTTY: process.stderr.isTTY === true,
};

class UsageError extends Error {}
/** A database or file the command needs is not there or not ready (exit 1). */
class NotReadyError extends Error {}

/** The package's version, read from package.json next to src/ (tsx) or dist/ (installed). */
function packageVersion(): string {
  const file = new URL('../../package.json', import.meta.url);
  const { version } = JSON.parse(fs.readFileSync(file, 'utf8')) as { version?: unknown };
  if (typeof version !== 'string') throw new Error(`no version in ${file.pathname}`);
  return version;
}

const positiveInt = (name: string) => (value: string) => {
  if (!/^\d+$/.test(value)) throw new UsageError(`${name} must be a whole number, got "${value}"`);
  return Number(value);
};
const nonNegative = (name: string) => (value: string) => {
  const n = Number(value);
  if (value.trim() === '' || !Number.isFinite(n) || n < 0)
    throw new UsageError(`${name} must be a number of days >= 0, got "${value}"`);
  return n;
};
const collect = (value: string, previous: string[] = []) => [...previous, value];
const dbOption = () =>
  new Option(
    '--db <url>',
    'store URL: sqlite:<path>, postgres://…, pglite:<dir>; by default an SQLite file in the working directory',
  ).default(DEFAULT_DB);

const mergeOption = () =>
  new Option(
    '--merge <how>',
    "when the target holds different rows under the same ids: keep-target keeps the target's (default: refuse, nothing written)",
  ).choices(['keep-target']);
const nulOption = () =>
  new Option(
    '--nul <how>',
    'NUL (U+0000) going into Postgres: keep (default: stored exactly in message text, system prompts and JSON; in an id or label it refuses), replace (U+FFFD instead), refuse (any NUL: nothing written)',
  ).choices(['keep', 'replace', 'refuse']);

/** copy and verify: each side's Postgres schema, when it differs from --schema. */
interface SideSchemas {
  fromSchema?: string;
  toSchema?: string;
}

interface TransferFlags {
  merge?: 'keep-target';
  nul?: 'keep' | 'replace' | 'refuse';
  verify: boolean;
}

const transferOptions = (o: TransferFlags): TransferOptions => ({
  onConflict: o.merge ?? 'refuse',
  onNul: o.nul ?? 'keep',
});

/** Run `body` on an open store, closing it afterwards whatever happens. */
async function using(store: SessionStore, body: (store: SessionStore) => Promise<void>): Promise<void> {
  try {
    await body(store);
  } finally {
    await store.close();
  }
}

/**
 * The open options that put a Postgres or PGlite store in `schema` (the `--schema` flags). Given for an SQLite
 * store it is a usage error: SQLite has no schemas, and ignoring the flag would quietly read another store.
 */
function inSchema(url: string, schema: string | undefined): { schema?: string } {
  if (schema === undefined) return {};
  if (parseStoreUrl(url).backend === 'sqlite') {
    throw new UsageError(
      `--schema applies to Postgres and PGlite stores; ${redactUrl(url)} is SQLite, which has no schemas`,
    );
  }
  return { schema };
}

/** SQLite files are opened read-only by the commands that only read them: not even the journal mode changes. */
const readsAsFile = (url: string) => {
  const location = parseStoreUrl(url);
  return location.backend === 'sqlite' && !location.memory;
};

/** A Hermes state.db (not one of our stores): an SQLite file without our migration history. */
async function isHermesFile(url: string): Promise<string | null> {
  const location = parseStoreUrl(url);
  if (location.backend !== 'sqlite' || location.memory || !fs.existsSync(location.path)) return null;
  let store: SessionStore | undefined;
  try {
    store = await openStore(url, { migrate: false, readonly: true });
    const status = await store.migrationStatus();
    return status.applied.length > 0 || status.unknownHashes.length > 0 ? null : location.path;
  } catch {
    return null; // not readable as SQLite: let openStore report it
  } finally {
    await store?.close();
  }
}

/**
 * Open a store for a command that only reads it: never created (a missing file or directory is an error naming
 * it), never migrated (pending migrations are an error saying to run migrate first).
 */
async function openForReading(url: string, schema?: string): Promise<SessionStore> {
  const migrateFirst = `run \`hermes-sessiondb migrate --db ${redactUrl(url)}${schema ? ` --schema ${schema}` : ''}\` first`;
  let store: SessionStore;
  try {
    store = await openStore(url, {
      migrate: false,
      mustExist: true,
      readonly: readsAsFile(url),
      ...inSchema(url, schema),
    });
  } catch (error) {
    if (error instanceof StoreNotFoundError && error.reason === 'NO_STORE') {
      throw new NotReadyError(`${error.message}. To create a store there, ${migrateFirst}.`, { cause: error });
    }
    throw error;
  }
  try {
    const status = await store.migrationStatus();
    if (status.unknownHashes.length > 0) {
      throw new NotReadyError(
        `${store.url} was migrated by a newer version of hermes-sessiondb (${status.unknownHashes.length} migration(s) this one does not know); upgrade hermes-sessiondb`,
      );
    }
    if (status.applied.length === 0) {
      throw new NotReadyError(
        `${store.url} holds no hermes-sessiondb store (no migration history). To create one there, ${migrateFirst}; to read a Hermes state.db, import it: hermes-sessiondb import <state.db> --to <store>.`,
      );
    }
    if (status.pending.length > 0) {
      throw new NotReadyError(
        `${store.url} has ${status.pending.length} pending migration(s) (${status.pending.join(', ')}): ${migrateFirst}.`,
      );
    }
    return store;
  } catch (error) {
    await store.close();
    throw error;
  }
}

/** Two URLs naming the same database (an in-memory SQLite store is never shared). */
function sameStore(a: string, b: string): boolean {
  const identity = (url: string) => {
    const l = parseStoreUrl(url);
    if (l.backend === 'sqlite') return l.memory ? null : `sqlite:${path.resolve(l.path)}`;
    if (l.backend === 'pglite') return l.dataDir === null ? null : `pglite:${path.resolve(l.dataDir)}`;
    return l.url;
  };
  const x = identity(a);
  return x !== null && x === identity(b);
}

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

/**
 * The store a command copies or verifies from: only read, never created (a missing one is an error naming it),
 * and readable under LC_CTYPE 'C' so such a database can be copied out (into a UTF-8 one).
 */
const openSourceStore = (url: string, schema?: string) =>
  openStore(url, {
    migrate: false,
    mustExist: true,
    readonly: readsAsFile(url),
    allowAsciiOnlyCtype: true,
    ...inSchema(url, schema),
  });

export async function main(argv: string[], io: CliIo = processIo): Promise<number> {
  let exitCode = 0;
  /** `--schema`: the Postgres schema of every store the command opens (copy and verify: per side). */
  const globalSchema = (): string | undefined => program.opts<{ schema?: string }>().schema;
  const withStore = async (
    url: string,
    body: (store: SessionStore) => Promise<void>,
    migrate = true,
    schema = globalSchema(),
  ) => {
    await using(await openStore(url, { migrate, ...inSchema(url, schema) }), body);
  };
  /** For the commands that only read: see openForReading. */
  const readingStore = async (url: string, body: (store: SessionStore) => Promise<void>, schema = globalSchema()) => {
    await using(await openForReading(url, schema), body);
  };

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

  program
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
        async (store) => {
          const report = await store.migrate();
          io.out(
            report.applied.length === 0
              ? `${store.url}: up to date (${report.total} migrations).\n`
              : `${store.url}: applied ${report.applied.join(', ')} (${report.total} migrations in all).\n`,
          );
        },
        false,
      );
    });

  program
    .command('status')
    .description('list applied and pending migrations')
    .addOption(dbOption())
    .addHelpText('after', '\nExample:\n  hermes-sessiondb status --db pglite:./pgdata')
    .action(async (o: { db: string }) => {
      // Never creates a file or directory; on a server an empty database is reported (all pending), not refused.
      const mustExist = parseStoreUrl(o.db).backend !== 'postgres';
      const options = { migrate: false, mustExist, readonly: readsAsFile(o.db), ...inSchema(o.db, globalSchema()) };
      await using(await openStore(o.db, options), async (store) => {
        const s = await store.migrationStatus();
        io.out(
          `${store.url}\n  applied: ${s.applied.join(', ') || 'none'}\n  pending: ${s.pending.join(', ') || 'none'}\n`,
        );
        if (s.unknownHashes.length > 0) io.out(`  unknown (from a newer version): ${s.unknownHashes.length}\n`);
        if (s.pending.length > 0 && s.unknownHashes.length === 0)
          io.out(`  apply them with: hermes-sessiondb migrate --db ${store.url}\n`);
      });
    });

  /** The closing summary's verdict; prints the differences and sets exit code 1 when they differ. */
  const verdict = (v: VerifyReport | undefined): string => {
    if (!v) return ' (not verified)';
    if (v.ok) return `; verified (${v.spotChecks.length} search spot-check${v.spotChecks.length === 1 ? '' : 's'}).`;
    exitCode = 1;
    return `; VERIFICATION FAILED:\n${v.problems.map((p) => `  ${p}`).join('\n')}`;
  };
  const rate = (messages: number, seconds: number) => fmt(seconds > 0 ? Math.round(messages / seconds) : messages);

  program
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
        await withStore(o.to, async (store) => {
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
              `(${rate(report.messages, report.seconds)} msg/s) into ${store.url}${verdict(report.verification)}\n`,
          );
        });
      } finally {
        source.close();
      }
    });

  program
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
      const fromSchema = o.fromSchema ?? globalSchema();
      const toSchema = o.toSchema ?? globalSchema();
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
        await withStore(
          o.to,
          async (to) => {
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
                `(${rate(report.messages, report.seconds)} msg/s) from ${from.url} into ${to.url}${verdict(report.verification)}\n`,
            );
          },
          true,
          toSchema,
        );
      } finally {
        await from.close();
      }
    });

  program
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
      const from = await openSource(o.from, o.fromSchema ?? globalSchema());
      const toSchema = o.toSchema ?? globalSchema();
      try {
        await readingStore(
          o.to,
          async (to) => {
            const r = await verifyTransfer(from.source, to);
            io.out(
              `sessions ${fmt(r.sessions.from)} / ${fmt(r.sessions.to)}, messages ${fmt(r.messages.from)} / ${fmt(r.messages.to)}, ` +
                `search spot-checks ${r.spotChecks.filter((c) => c.same).length}/${r.spotChecks.length}\n`,
            );
            for (const p of r.problems) io.out(`  ${p}\n`);
            io.out(r.ok ? 'verified: the stores agree.\n' : 'verification failed.\n');
            if (!r.ok) exitCode = 1;
          },
          toSchema,
        );
      } finally {
        await from.close();
      }
    });

  program
    .command('search')
    .description('search messages (content, tool names, tool-call arguments)')
    .argument('<query>', 'the search query (quotes for phrases, word* for prefixes, OR, NOT)')
    .addOption(dbOption())
    .option('--source <source>', 'only these sources (repeatable)', collect)
    .option('--exclude-source <source>', 'not these sources (repeatable)', collect)
    .option('--role <role>', 'only these roles (repeatable)', collect)
    .option('--limit <n>', 'at most this many results', positiveInt('--limit'), 20)
    .addOption(
      new Option('--sort <order>', 'result order').choices(['relevance', 'newest', 'oldest']).default('relevance'),
    )
    .option('--json', 'print JSON lines instead of text')
    .addHelpText(
      'after',
      '\nExamples:\n  hermes-sessiondb search docker\n  hermes-sessiondb search "记忆断裂" --source telegram --sort newest',
    )
    .action(
      async (
        query: string,
        o: {
          db: string;
          source?: string[];
          excludeSource?: string[];
          role?: string[];
          limit: number;
          sort: SearchSort;
          json?: boolean;
        },
      ) => {
        await readingStore(o.db, async (store) => {
          const hits = await store.searchMessages(query, {
            sourceFilter: o.source ?? null,
            excludeSources: o.excludeSource ?? null,
            roleFilter: o.role ?? null,
            limit: o.limit,
            sort: o.sort,
          });
          for (const h of hits) {
            if (o.json) io.out(`${JSON.stringify(h)}\n`);
            else
              io.out(
                `${new Date(h.timestamp * 1000).toISOString()}  ${h.sessionId}  [${h.source}/${h.role}]  ${(h.snippet ?? '').replace(/\s+/g, ' ').trim()}\n`,
              );
          }
          if (!o.json) io.out(`${hits.length} result${hits.length === 1 ? '' : 's'}\n`);
        });
      },
    );

  program
    .command('stats')
    .description('sessions, messages, tokens and cost by model and source, database size')
    .addOption(dbOption())
    .option('--json', 'print JSON')
    .action(async (o: { db: string; json?: boolean }) => {
      await readingStore(o.db, async (store) => {
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

  program
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
      await readingStore(o.db, async (store) => {
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

  program
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
      await using(await openStore(o.db, { mustExist: true, ...inSchema(o.db, globalSchema()) }), async (store) => {
        if (o.dryRun) {
          const n = await store.sessions.countPrunable(o.olderThan, o.source ?? null);
          io.out(`would prune ${n} session${n === 1 ? '' : 's'} (dry run; nothing deleted)\n`);
        } else {
          const n = await store.pruneSessions({ olderThanDays: o.olderThan, source: o.source ?? null });
          io.out(`pruned ${n} session${n === 1 ? '' : 's'}\n`);
        }
      });
    });

  if (argv.length === 0) {
    io.err(program.helpInformation());
    return 2;
  }
  try {
    await program.parseAsync(argv, { from: 'user' });
  } catch (error) {
    if (error instanceof CommanderError) {
      // --help and --version exit with 0; everything else commander rejects is a usage error.
      exitCode = error.exitCode === 0 ? 0 : 2;
    } else if (error instanceof UsageError) {
      io.err(`error: ${error.message}\n`);
      exitCode = 2;
    } else if (error instanceof SessionDbError) {
      io.err(`error: ${error.message}\n`);
      exitCode = error.code === 'VALIDATION' || error.code === 'INVALID_URL' ? 2 : 1;
    } else {
      io.err(`error: ${error instanceof Error ? error.message : String(error)}\n`);
      exitCode = 1;
    }
  }
  return exitCode;
}

// Run when executed (the bin, or `node dist/cli/main.js`), not when imported by tests.
const invoked = process.argv[1] ? pathToFileURL(fs.realpathSync(process.argv[1])).href : '';
if (import.meta.url === invoked) process.exitCode = await main(process.argv.slice(2));
