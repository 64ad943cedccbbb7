/**
 * What a database's columns can hold, so that an import or copy finds every value its target cannot store
 * before it writes anything (transfer/pipeline.ts), instead of failing on a page after the sessions went in.
 * Values are checked as bulkInsert receives them (repos/import.ts builds them): times in epoch seconds,
 * integers and reals as numbers (a source's text that is no number arrives as NaN), text as strings.
 */
import type { BulkColumn } from './dialect.js';

export interface BulkLimits {
  /**
   * Epoch seconds a time column holds, from `first` to below `end` after rounding to the microsecond; null: any number.
   * Postgres: years 1 to 9999 (what the timestamptz codec writes and reads back); MySQL DATETIME(6): 1000 to 9999.
   */
  readonly time: { readonly first: number; readonly end: number; readonly years: string } | null;
  /** Integer columns need integers exact in JavaScript (bigint columns); false: any number (SQLite's affinity keeps it). */
  readonly integers: boolean;
  /** Columns (`table.column`) of 32-bit integers. */
  readonly int32: ReadonlySet<string>;
  /** Real columns need finite numbers (SQLite's REAL keeps ±Infinity; Postgres' would go through JSON as null). */
  readonly finiteReals: boolean;
  /** The most UTF-8 bytes a text column (`table.column`) holds. */
  readonly textBytes: ReadonlyMap<string, number>;
  /** The most bytes one statement may carry (MySQL's max_allowed_packet, read from the server), or null. */
  readonly statementBytes: number | null;
  /**
   * NUL (U+0000) is kept only in message text, escaped (Postgres): the transfers' `onNul` applies, and NUL in
   * an identifier or label is refused. False: NUL is stored as any other character.
   */
  readonly nulOnlyInMessageText: boolean;
}

/** A statement's own text beyond its rows (the INSERT head and conflict tail) and the protocol's framing. */
export const STATEMENT_OVERHEAD_BYTES = 4096;

const INT32_MIN = -2_147_483_648;
const INT32_MAX = 2_147_483_647;
/** 0001-01-01, 1000-01-01 and 10000-01-01 (UTC) in epoch seconds. */
export const YEAR_1 = -62_135_596_800;
export const YEAR_1000 = -30_610_224_000;
export const YEAR_10000 = 253_402_300_800;
const MILLISECOND_LOOKING = 1e12;

const rounded = (seconds: number) => Math.round(seconds * 1_000_000) / 1_000_000;

/** Why `value` cannot be stored in `table.column` under `limits`, or null when it can. */
export function unfitReason(limits: BulkLimits, table: string, column: BulkColumn, value: unknown): string | null {
  if (value === null || value === undefined) return null;
  const key = `${table}.${column.name}`;
  switch (column.type) {
    case 'time': {
      const v = value as number;
      if (Number.isNaN(v)) return 'is not a number of epoch seconds';
      if (limits.time === null) return null;
      const { first, end, years } = limits.time;
      const at = rounded(v);
      if (at >= first && at < end) return null;
      // Epoch milliseconds of these decades are about 1.7e12: outside every year this side of 10000 as seconds.
      const hint = Math.abs(at) >= MILLISECOND_LOOKING ? '; it looks like milliseconds, not seconds' : '';
      return `is outside the times this database holds (${years} UTC: epoch seconds from ${first} to below ${end})${hint}`;
    }
    case 'int': {
      const v = value as number;
      if (Number.isNaN(v)) return 'is not a number';
      if (limits.int32.has(key) && !(Number.isInteger(v) && v >= INT32_MIN && v <= INT32_MAX))
        return 'is not a 32-bit integer';
      if (limits.integers && !Number.isSafeInteger(v)) return 'is not an integer within ±2^53';
      return null;
    }
    case 'real': {
      const v = value as number;
      if (Number.isNaN(v)) return 'is not a number';
      if (limits.finiteReals && !Number.isFinite(v)) return 'is not a finite number';
      return null;
    }
    default: {
      const max = limits.textBytes.get(key);
      if (max !== undefined && typeof value === 'string') {
        const bytes = Buffer.byteLength(value, 'utf8');
        if (bytes > max) return `is ${bytes} bytes in UTF-8, more than the ${max} this column holds`;
      }
      return null;
    }
  }
}

/** Characters mysql2 escapes with a backslash when it writes a string into a statement. */
function escaped(text: string): number {
  let n = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    // \0 \b \t \n \r \x1a " ' \
    if (c === 0 || c === 8 || c === 9 || c === 10 || c === 13 || c === 26 || c === 34 || c === 39 || c === 92) n++;
  }
  return n;
}

/** Bytes of one value in a statement's text as the server receives it (a bound above for a non-string). */
export function valueBytes(type: BulkColumn['type'], value: unknown): number {
  if (value === null || value === undefined) return 4;
  if (typeof value === 'string') return Buffer.byteLength(value, 'utf8') + escaped(value) + 2;
  // A time goes as 'YYYY-MM-DD HH:MM:SS.ffffff'; a number is at most 24 characters of JavaScript's text.
  return type === 'time' ? 28 : 24;
}

/** Bytes of one row's tuple in a multi-row INSERT: its values, their separators and the parentheses. */
export function rowBytes(columns: readonly BulkColumn[], row: readonly unknown[]): number {
  let n = 4 + 2 * columns.length;
  for (let c = 0; c < columns.length; c++) n += valueBytes(columns[c]!.type, row[c] ?? null);
  return n;
}

/** A value an import or copy found its target cannot hold, before writing anything. */
export interface UnfitValue {
  /** The target table: sessions, messages, state_meta, telegram_dm_topic_mode or telegram_dm_topic_bindings. */
  readonly table: string;
  /** The row's id (a state_meta key; `chat/thread` for a topic binding). */
  readonly id: string;
  readonly column: string;
  /** The value as it would have been written (text cut to its first 40 characters). */
  readonly value: unknown;
  /** Why the target cannot hold it. */
  readonly reason: string;
}
