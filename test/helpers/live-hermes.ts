/**
 * What the live Hermes writer (test/reliability/workers/hermes-appender.ts) appends: message n of the run,
 * whose text can be rebuilt from n alone, so a reader can tell a whole message from a torn one. Lengths
 * vary up to ~9 KB, so some messages spill onto overflow pages.
 */
export const LIVE_SESSION_PREFIX = 'live_';
/** The appender starts a new session every this many messages. */
export const LIVE_MESSAGES_PER_SESSION = 25;

export function liveSessionId(n: number): string {
  return `${LIVE_SESSION_PREFIX}${String(Math.floor(n / LIVE_MESSAGES_PER_SESSION)).padStart(6, '0')}`;
}

export function liveContent(n: number): string {
  return `live ${n} ${`${n.toString(36)}-chunk `.repeat((n * 37) % 900)}end ${n}`;
}

/** The message number a live message's text names (null for any other text). */
export function liveNumber(content: unknown): number | null {
  const match = typeof content === 'string' ? /^live (\d+) /.exec(content) : null;
  return match ? Number(match[1]) : null;
}
