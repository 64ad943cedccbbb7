/**
 * Copying one store into another (SQLite, PGlite, Postgres, in any direction), keeping session ids,
 * message ids, timestamps (to the microsecond), JSON, structured content, titles, lineage, handoff
 * state and Telegram topic rows. The same pipeline as importing a Hermes file; the source is only read.
 */
import type { SessionStore } from '../store.js';
import { type TransferCounts, type TransferOptions, transferRows } from './pipeline.js';
import { storeSource } from './sources.js';
import { type VerifyReport, verifyTransfer } from './verify.js';

export interface CopyReport extends TransferCounts {
  from: string;
  to: string;
  /** Seconds spent copying rows (verification not included). */
  seconds: number;
  verification?: VerifyReport;
}

export interface CopyOptions extends TransferOptions {
  /** Compare the two stores afterwards. */
  verify?: boolean;
}

export async function copyStore(from: SessionStore, to: SessionStore, options: CopyOptions = {}): Promise<CopyReport> {
  const started = performance.now();
  const source = storeSource(from);
  const counts = await transferRows(source, to, options);
  const seconds = (performance.now() - started) / 1000;
  const verification = options.verify
    ? await verifyTransfer(source, to, { nulReplaced: counts.nulReplaced > 0 })
    : undefined;
  return { from: from.url, to: to.url, ...counts, seconds, ...(verification ? { verification } : {}) };
}
