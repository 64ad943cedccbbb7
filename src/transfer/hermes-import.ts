/**
 * Importing a Hermes state.db (any schema version with sessions and messages) into a store.
 *
 * The source is never written: it is opened read-only and copied, as of one point in time, to a private
 * snapshot with SQLite's online backup API (Hermes may be writing it meanwhile); the snapshot is read. Columns are mapped by name from PRAGMA table_info; columns and tables this library does
 * not know (later Hermes versions add many) are reported with how much data they hold, never dropped
 * silently. Ids, timestamps and counters are kept. Every insert is ON CONFLICT DO NOTHING, so an
 * interrupted import can simply be run again.
 */
import type { SessionStore } from '../store.js';
import { TransferRefusedError, type TransferOptions, type TransferProgress, transferRows } from './pipeline.js';
import { HermesFileSource, ImportError, type UnknownColumn, type UnknownTable } from './sources.js';
import { type VerifyReport, verifyTransfer } from './verify.js';

export { ImportError, type UnknownColumn, type UnknownTable } from './sources.js';

export interface ImportReport {
  source: string;
  schemaVersion: number | null;
  sessions: number;
  messages: number;
  meta: number;
  topicBindings: number;
  unknownColumns: UnknownColumn[];
  unknownTables: UnknownTable[];
  /** Session ids that messages or topic bindings use but the file lacks: imported as stub sessions. */
  orphanSessions: string[];
  /** quick_check findings confined to the source's FTS index tables (not copied; the target indexes afresh). */
  ftsDamageIgnored: string[];
  /** Rows whose NUL characters became U+FFFD (onNul: 'replace' into Postgres). */
  nulReplaced: number;
  /** Seconds spent copying rows (verification not included). */
  seconds: number;
  /** The comparison of the snapshot with the store, when `verify: true`. */
  verification?: VerifyReport;
}

export type ImportProgress = TransferProgress;

export interface ImportOptions extends TransferOptions {
  /** Compare the file with the store afterwards (counts, per-session digests, search spot-checks). */
  verify?: boolean;
}

export async function importHermesStateDb(
  file: string,
  store: SessionStore,
  options: ImportOptions = {},
): Promise<ImportReport> {
  const started = performance.now();
  const source = await HermesFileSource.open(file);
  try {
    return await importFromSource(source, store, options, started);
  } finally {
    source.close();
  }
}

/**
 * Import from a snapshot already taken (the CLI takes it before opening the target, so a bad file creates
 * nothing). `started` is when the import began (performance.now()), for the report's seconds. The caller closes `source`.
 */
export async function importFromSource(
  source: HermesFileSource,
  store: SessionStore,
  options: ImportOptions = {},
  started = performance.now(),
): Promise<ImportReport> {
  const file = source.label;
  const counts = await transferRows(source, store, options).catch((error: unknown) => {
    throw error instanceof TransferRefusedError ? new ImportError(file, error.reason, { cause: error }) : error;
  });
  const seconds = (performance.now() - started) / 1000;
  const verification = options.verify
    ? await verifyTransfer(source, store, { nulReplaced: counts.nulReplaced > 0 })
    : undefined;
  return {
    source: file,
    schemaVersion: source.schemaVersion,
    sessions: counts.sessions,
    messages: counts.messages,
    meta: counts.meta,
    topicBindings: counts.topicBindings,
    unknownColumns: source.unknownColumns,
    unknownTables: source.unknownTables,
    orphanSessions: source.orphanSessions,
    ftsDamageIgnored: source.ftsDamageIgnored,
    nulReplaced: counts.nulReplaced,
    seconds,
    ...(verification ? { verification } : {}),
  };
}
