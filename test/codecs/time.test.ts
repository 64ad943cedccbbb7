import { describe, expect, it, vi } from 'vitest';
import { epochSecondsToTimestamptz, roundToMicros, timestamptzToEpochSeconds } from '../../src/codecs/time.js';
import { nowEpochSeconds } from '../../src/index.js';

describe('epoch seconds <-> timestamptz text', () => {
  it('formats UTC with six fractional digits', () => {
    expect(epochSecondsToTimestamptz(1793491200.123456)).toBe('2026-11-01T00:00:00.123456Z');
    expect(epochSecondsToTimestamptz(0)).toBe('1970-01-01T00:00:00.000000Z');
    expect(epochSecondsToTimestamptz(-0.5)).toBe('1969-12-31T23:59:59.500000Z');
  });

  it('parses what Postgres prints, in any session time zone', () => {
    expect(timestamptzToEpochSeconds('2026-11-01 00:00:00.123456+00')).toBe(1793491200.123456);
    expect(timestamptzToEpochSeconds('2026-11-01 02:00:00.5+02')).toBe(1793491200.5);
    expect(timestamptzToEpochSeconds('2026-10-31 19:30:00-04:30')).toBe(1793491200);
    expect(timestamptzToEpochSeconds('2026-11-01T00:00:00Z')).toBe(1793491200);
    expect(() => timestamptzToEpochSeconds('yesterday')).toThrow(RangeError);
  });

  it('round-trips any microsecond-rounded time exactly (10,000 random values)', () => {
    for (let i = 0; i < 10_000; i++) {
      const value = roundToMicros(Math.random() * 4_000_000_000 - 1_000_000_000);
      expect(timestamptzToEpochSeconds(epochSecondsToTimestamptz(value))).toBe(value);
    }
  });

  it('reads years 1 to 99 as themselves (Date.UTC takes them for 1900 to 1999)', () => {
    for (const value of [-62_135_596_800, -62_130_499_199.75, -61_000_000_000.5, -59_011_459_200.25]) {
      expect(timestamptzToEpochSeconds(epochSecondsToTimestamptz(value))).toBe(value);
    }
    expect(timestamptzToEpochSeconds('0001-01-01 00:00:00+00')).toBe(-62_135_596_800);
    expect(timestamptzToEpochSeconds('0004-02-29 12:00:00+00')).toBe(-62_035_848_000);
  });

  it('refuses non-finite times', () => {
    expect(() => epochSecondsToTimestamptz(Number.NaN)).toThrow(RangeError);
    expect(() => epochSecondsToTimestamptz(Number.POSITIVE_INFINITY)).toThrow(RangeError);
  });

  it('never steps back when the wall clock and the precise clock drift about 1 ms apart', () => {
    const wall = Math.floor(Date.now()) + 60_000;
    const readings = (precise: number, at = wall) => {
      const dateNow = vi.spyOn(Date, 'now').mockReturnValue(at);
      const perfNow = vi.spyOn(performance, 'now').mockReturnValue(precise - performance.timeOrigin);
      try {
        return nowEpochSeconds();
      } finally {
        dateNow.mockRestore();
        perfNow.mockRestore();
      }
    };
    // 0.95 ms apart: the precise clock is read; 1.05 ms apart: the wall clock, 0.95 ms earlier.
    const first = readings(wall + 0.95);
    expect(first).toBe(roundToMicros((wall + 0.95) / 1000));
    expect(readings(wall + 1.05)).toBe(first);
    // A real adjustment of the wall clock (an hour back) is followed.
    expect(readings(wall - 3_600_000, wall - 3_600_000)).toBe((wall - 3_600_000) / 1000);
  });

  it('reads the clock to the microsecond, close to Date.now()', () => {
    const now = nowEpochSeconds();
    expect(Math.abs(now - Date.now() / 1000)).toBeLessThan(1);
    expect(roundToMicros(now)).toBe(now);
  });
});
