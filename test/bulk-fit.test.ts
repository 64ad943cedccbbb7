/** The column limits an import or copy checks before its first write (db/bulk-fit.ts), value by value. */
import { describe, expect, it } from 'vitest';
import { rowBytes, unfitReason } from '../src/db/bulk-fit.js';
import { BULK_LIMITS as PG_LIMITS } from '../src/db/pg/spelling.js';
import { BULK_LIMITS as SQLITE_LIMITS } from '../src/db/sqlite/spelling.js';
import type { BulkColumn } from '../src/db/dialect.js';

const col = (name: string, type: BulkColumn['type']): BulkColumn => ({ name, type });
const mysqlLike = { ...PG_LIMITS, textBytes: new Map([['sessions.id', 8]]), statementBytes: 1000 };

describe('unfitReason', () => {
  it('refuses NaN everywhere (text that is no number), and what only a bigint or int4 column cannot hold', () => {
    for (const limits of [SQLITE_LIMITS, PG_LIMITS]) {
      expect(unfitReason(limits, 'messages', col('timestamp', 'time'), Number.NaN)).toMatch(/not a number/);
      expect(unfitReason(limits, 'sessions', col('estimated_cost_usd', 'real'), Number.NaN)).toMatch(/not a number/);
      expect(unfitReason(limits, 'sessions', col('input_tokens', 'int'), Number.NaN)).toMatch(/not a number/);
      expect(unfitReason(limits, 'messages', col('timestamp', 'time'), null)).toBeNull();
    }
    expect(unfitReason(SQLITE_LIMITS, 'messages', col('timestamp', 'time'), 1.7e12)).toBeNull();
    expect(unfitReason(PG_LIMITS, 'messages', col('timestamp', 'time'), 1.7e12)).toMatch(/milliseconds/);
    expect(unfitReason(PG_LIMITS, 'messages', col('token_count', 'int'), 2 ** 31)).toMatch(/32-bit/);
    expect(unfitReason(PG_LIMITS, 'messages', col('token_count', 'int'), 2 ** 31 - 1)).toBeNull();
    expect(unfitReason(PG_LIMITS, 'sessions', col('input_tokens', 'int'), 1.5)).toMatch(/integer/);
    expect(unfitReason(SQLITE_LIMITS, 'sessions', col('input_tokens', 'int'), 1.5)).toBeNull();
    expect(unfitReason(PG_LIMITS, 'sessions', col('actual_cost_usd', 'real'), Number.POSITIVE_INFINITY)).toMatch(
      /finite/,
    );
    expect(unfitReason(SQLITE_LIMITS, 'sessions', col('actual_cost_usd', 'real'), Number.POSITIVE_INFINITY)).toBeNull();
  });

  it('counts text in UTF-8 bytes against a byte-bounded column', () => {
    expect(unfitReason(mysqlLike, 'sessions', col('id', 'text'), 'abcdefgh')).toBeNull();
    expect(unfitReason(mysqlLike, 'sessions', col('id', 'text'), '漢漢漢')).toMatch(/9 bytes/);
  });
});

describe('rowBytes', () => {
  it('counts UTF-8 bytes, the escapes mysql2 adds, quotes and separators', () => {
    const columns = [col('a', 'text'), col('b', 'time'), col('c', 'int')];
    // (  'x\'漢'  ,  '<28 bytes of time>'  ,  <24 bytes of number>  )
    expect(rowBytes(columns, ["x'漢", 1.7e9, 5])).toBe(4 + 2 * 3 + (1 + 2 + 3 + 2) + 28 + 24);
    expect(rowBytes(columns, [null, null, null])).toBe(4 + 2 * 3 + 3 * 4);
  });
});
