/** What several commands share: the IO and run context, the usage errors, the option builders, the summaries. */
import { Option } from 'commander';
import type { TransferOptions } from '../transfer/pipeline.js';
import type { VerifyReport } from '../transfer/verify.js';
import { fmt } from './progress.js';

export const DEFAULT_DB = 'sqlite:./hermes-sessiondb.db';

export interface CliIo {
  out(text: string): void;
  err(text: string): void;
  /** Standard error is a terminal: progress is drawn as a bar rather than printed as lines. */
  errIsTTY?: boolean;
  /** Like out, resolving once more may follow (large output waits for the reader); out when absent. */
  write?(text: string): Promise<void>;
}

/** What a command gets from the program it runs in. */
export interface CliContext {
  readonly io: CliIo;
  /** `--schema`: the Postgres schema of every store the command opens (copy and verify: per side). */
  schema(): string | undefined;
  /** The command found a difference (a failed verification): exit 1 without an error message. */
  fail(): void;
}

/** The command line is wrong or needs a flag (exit 2). */
export class UsageError extends Error {}
/** A database or file the command needs is not there or not ready (exit 1). */
export class NotReadyError extends Error {}

export const positiveInt = (name: string) => (value: string) => {
  if (!/^\d+$/.test(value)) throw new UsageError(`${name} must be a whole number, got "${value}"`);
  return Number(value);
};
export const nonNegative = (name: string) => (value: string) => {
  const n = Number(value);
  if (value.trim() === '' || !Number.isFinite(n) || n < 0)
    throw new UsageError(`${name} must be a number of days >= 0, got "${value}"`);
  return n;
};
export const collect = (value: string, previous: string[] = []) => [...previous, value];
export const dbOption = () =>
  new Option(
    '--db <url>',
    'store URL: sqlite:<path>, postgres://…, pglite:<dir>; by default an SQLite file in the working directory',
  ).default(DEFAULT_DB);

export const mergeOption = () =>
  new Option(
    '--merge <how>',
    "when the target holds different rows under the same ids: keep-target keeps the target's (default: refuse, nothing written)",
  ).choices(['keep-target']);
export const nulOption = () =>
  new Option(
    '--nul <how>',
    'NUL (U+0000) going into Postgres: keep (default: stored exactly in message text, system prompts and JSON; in an id or label it refuses), replace (U+FFFD instead), refuse (any NUL: nothing written)',
  ).choices(['keep', 'replace', 'refuse']);

/** copy and verify: each side's Postgres schema, when it differs from --schema. */
export interface SideSchemas {
  fromSchema?: string;
  toSchema?: string;
}

export interface TransferFlags {
  merge?: 'keep-target';
  nul?: 'keep' | 'replace' | 'refuse';
  verify: boolean;
}

export const transferOptions = (o: TransferFlags): TransferOptions => ({
  onConflict: o.merge ?? 'refuse',
  onNul: o.nul ?? 'keep',
});

/** The closing summary's verdict of import and copy; prints the differences and fails the run when they differ. */
export const verdict = (cli: CliContext, v: VerifyReport | undefined): string => {
  if (!v) return ' (not verified)';
  if (v.ok) return `; verified (${v.spotChecks.length} search spot-check${v.spotChecks.length === 1 ? '' : 's'}).`;
  cli.fail();
  return `; VERIFICATION FAILED:\n${v.problems.map((p) => `  ${p}`).join('\n')}`;
};
export const rate = (messages: number, seconds: number) => fmt(seconds > 0 ? Math.round(messages / seconds) : messages);
