/**
 * Epoch seconds <-> PostgreSQL `timestamptz` text, exact to the microsecond.
 *
 * The public API speaks Unix epoch seconds as numbers on every backend (Hermes stores REAL seconds).
 * Postgres keeps microseconds, so a value survives a round trip exactly when it is already rounded to the
 * microsecond; `roundToMicros` gives writers that form. We format and parse the text ourselves instead of
 * going through `Date`, which would cut everything below the millisecond.
 */

const MICROS_PER_SECOND = 1_000_000;
/** Seconds in 400 Gregorian years, after which the calendar repeats. */
const CYCLE_SECONDS = 146_097 * 86_400;

/** The nearest double to `value` rounded to whole microseconds. */
export function roundToMicros(value: number): number {
  return Math.round(value * MICROS_PER_SECOND) / MICROS_PER_SECOND;
}

/** The clock's last reading, and the largest step back that is held at it (see nowEpochSeconds). */
let lastReading = 0;
const MAX_HELD_STEP_SECONDS = 0.01;

/**
 * The current wall-clock time as epoch seconds, rounded to the microsecond (what Postgres stores exactly).
 * `performance` supplies the sub-millisecond digits; if the wall clock was adjusted since the process
 * started (so the two disagree), the wall clock wins.
 */
export function nowEpochSeconds(): number {
  const wallMs = Date.now();
  const preciseMs = performance.timeOrigin + performance.now();
  const ms = Math.abs(preciseMs - wallMs) < 1 ? preciseMs : wallMs;
  let seconds = roundToMicros(ms / 1000);
  // Where the two sources drift about 1 ms apart, successive calls switch between them and could step back
  // by up to a millisecond: a session started right after its parent ended would seem to start before it.
  // Such a step is held at the last reading; a real adjustment of the wall clock is followed.
  if (seconds < lastReading && lastReading - seconds < MAX_HELD_STEP_SECONDS) seconds = lastReading;
  lastReading = seconds;
  return seconds;
}

/** `1793491200.123456` -> `2026-11-01T00:00:00.123456Z` (ISO 8601, UTC, six fractional digits). */
export function epochSecondsToTimestamptz(value: number): string {
  if (!Number.isFinite(value)) {
    throw new RangeError(`timestamp must be a finite number of epoch seconds, got ${String(value)}`);
  }
  const totalMicros = Math.round(value * MICROS_PER_SECOND);
  const wholeSeconds = Math.floor(totalMicros / MICROS_PER_SECOND);
  const fraction = totalMicros - wholeSeconds * MICROS_PER_SECOND;
  const iso = new Date(wholeSeconds * 1000).toISOString(); // ...T..:..:..000Z, millis are always 000
  return `${iso.slice(0, -5)}.${String(fraction).padStart(6, '0')}Z`;
}

/** `1793491200.123456` -> `2026-11-01 00:00:00.123456`: a MySQL/MariaDB DATETIME(6) literal, in UTC. */
export function epochSecondsToDatetime(value: number): string {
  const iso = epochSecondsToTimestamptz(value);
  return `${iso.slice(0, 10)} ${iso.slice(11, -1)}`;
}

const TIMESTAMPTZ_TEXT =
  /^(\d{4,})-(\d{2})-(\d{2})[ T](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,6}))?(?:(Z)|([+-])(\d{2})(?::?(\d{2}))?(?::?(\d{2}))?)?$/;

/** Postgres `timestamptz` output text (any session time zone) -> epoch seconds, exact to the microsecond. */
export function timestamptzToEpochSeconds(text: string): number {
  const m = TIMESTAMPTZ_TEXT.exec(text.trim());
  if (!m) throw new RangeError(`unrecognised timestamptz value: ${JSON.stringify(text)}`);
  const [, y, mo, d, h, mi, s, frac, , sign, oh, om, os] = m;
  const year = Number(y);
  // Date.UTC reads years 0 to 99 as 1900 to 1999: those are read 400 years (one calendar cycle) later.
  const shift = year < 100 ? 400 : 0;
  let seconds =
    Date.UTC(year + shift, Number(mo) - 1, Number(d), Number(h), Number(mi), Number(s)) / 1000 -
    (shift / 400) * CYCLE_SECONDS;
  if (sign) {
    const offset = Number(oh) * 3600 + Number(om ?? 0) * 60 + Number(os ?? 0);
    seconds -= sign === '+' ? offset : -offset;
  }
  const micros = frac ? Number(frac.padEnd(6, '0')) : 0;
  return (seconds * MICROS_PER_SECOND + micros) / MICROS_PER_SECOND;
}
