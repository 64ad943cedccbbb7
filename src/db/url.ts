/**
 * Store URLs: which engine reads one (each engine's descriptor parses its own schemes, see docs/api.md for the
 * forms), and how to print a URL without its password.
 */
import { InvalidUrlError } from '../errors.js';
import { type AnyEngine, type StoreLocation, engines } from './engines.js';

export type { StoreLocation };

/** Query parameters whose values are credentials: password, sslpassword, passfile, tokens, secrets. */
const SECRET_PARAM = /pass|secret|token/i;
/** `key=value` pairs of a query, wherever a `?` or `&` starts one (a password may itself hold `?`). */
const QUERY_PAIR = /([?&])([^=&#]*)=([^&]*)/g;

/** Decode a query key or value as URLSearchParams does (`+` is a space); a malformed escape stays as it is. */
function decodeQueryPart(part: string): string {
  const spaced = part.replace(/\+/g, ' ');
  try {
    return decodeURIComponent(spaced);
  } catch {
    return spaced;
  }
}

function decodeOrKeep(part: string): string {
  try {
    return decodeURIComponent(part);
  } catch {
    return part;
  }
}

/**
 * Where the authority of a URL-like string starts: after the first `://`, or after a scheme an engine reads
 * without slashes (its `bareAuthority`). -1 when there is none (a file path, a data directory).
 */
function authorityStart(url: string): number {
  // The URL's own scheme first: a password may itself hold `://` (postgres:app:pw://x@host).
  const scheme = /^\s*[a-z][a-z0-9+.-]*:\/\//i.exec(url);
  if (scheme) return scheme[0].length;
  for (const engine of engines) {
    const bare = engine.bareAuthority?.exec(url);
    if (bare) return bare[0].length;
  }
  const slashes = url.indexOf('://');
  return slashes >= 0 ? slashes + 3 : -1;
}

/**
 * The userinfo password of a URL-like string as written: from the first `:` to the LAST `@`, so a raw `@`,
 * `/`, `?` or `#` in the password (which no parser agrees on) is still all of it. Null without one.
 */
function rawPassword(url: string): { start: number; end: number } | null {
  const from = authorityStart(url);
  if (from < 0) return null;
  const at = url.lastIndexOf('@');
  if (at < from) return null;
  const colon = url.indexOf(':', from);
  if (colon < 0 || colon > at) return null;
  return { start: colon + 1, end: at };
}

/**
 * A store URL fit to print: the userinfo password and every credential query parameter (`password=`,
 * `sslpassword=`, …) become `***`. Errs toward hiding: a URL that does not parse, a multi-host URL, a
 * password holding `@`, `/`, `?` or `#` are all covered; an `@` later in the query may hide the host too.
 */
export function redactUrl(url: string): string {
  let out = url;
  const password = rawPassword(out);
  if (password) out = `${out.slice(0, password.start)}***${out.slice(password.end)}`;
  out = out.replace(QUERY_PAIR, (pair, sep: string, key: string) =>
    SECRET_PARAM.test(decodeQueryPart(key)) ? `${sep}${key}=***` : pair,
  );
  // The same secret written again elsewhere (another parameter, the database name) goes too.
  return scrubSecrets(out, urlSecrets(url));
}

/** Shorter secrets are only masked where they stand in the URL: elsewhere they cannot be told from ordinary text. */
const MIN_SCRUBBED_LENGTH = 4;

/**
 * Every form a credential of `url` may take in a driver's words: as written, percent-decoded, and as the
 * URL parser re-encodes it. For scrubbing errors that may quote the URL or its parts.
 */
function urlSecrets(url: string): string[] {
  const found = new Set<string>();
  const add = (value: string) => {
    found.add(value);
    found.add(decodeOrKeep(value));
  };
  const password = rawPassword(url);
  if (password) add(url.slice(password.start, password.end));
  // As the URL parser reads it, and as each driver does.
  const readings = [(u: string) => [new URL(u).password], ...engines.flatMap((e) => e.urlPasswords ?? [])];
  for (const read of readings) {
    try {
      for (const password of read(url)) add(password);
    } catch {
      // Not a URL to this parser: the forms as written are all there is.
    }
  }
  for (const [, , key, value] of url.matchAll(QUERY_PAIR)) {
    if (value === undefined || !SECRET_PARAM.test(decodeQueryPart(key ?? ''))) continue;
    add(value);
    found.add(decodeQueryPart(value));
  }
  // Longest first, so a secret that contains another is replaced whole.
  return [...found].filter((v) => v.length >= MIN_SCRUBBED_LENGTH).sort((a, b) => b.length - a.length);
}

/** Replace each secret in `text` with `***`. */
function scrubSecrets(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const secret of secrets) out = out.split(secret).join('***');
  return out;
}

/**
 * Remove `url`'s credentials from a driver error in place, through its `cause` chain and an AggregateError's
 * `errors`: the message, the stack and every string field (Node's URL errors keep the whole URL in `input`).
 */
export function scrubErrorSecrets<T>(error: T, url: string): T {
  const secrets = urlSecrets(url);
  if (secrets.length === 0) return error;
  const seen = new Set<object>();
  const queue: unknown[] = [error];
  while (queue.length > 0 && seen.size < 20) {
    const e = queue.shift();
    if (e === null || typeof e !== 'object' || seen.has(e)) continue;
    seen.add(e);
    const record = e as Record<string, unknown>;
    for (const key of new Set([...Object.getOwnPropertyNames(e), 'message', 'stack'])) {
      const value = record[key];
      if (typeof value !== 'string') continue;
      const clean = scrubSecrets(value, secrets);
      if (clean === value) continue;
      const enumerable = Object.prototype.propertyIsEnumerable.call(e, key);
      try {
        Object.defineProperty(e, key, { value: clean, writable: true, configurable: true, enumerable });
      } catch {
        // A frozen field cannot be cleaned; the error is still reported.
      }
    }
    queue.push(record.cause);
    if (Array.isArray(record.errors)) queue.push(...record.errors);
  }
  return error;
}

/** The engine that reads `url`, and its location. Throws InvalidUrlError for a URL no engine takes. */
export function readStoreUrl(url: string): { engine: AnyEngine; location: StoreLocation } {
  if (typeof url !== 'string' || url.trim() === '') {
    // A URL object's text would carry its password.
    throw new InvalidUrlError(redactUrl(String(url)), 'expected a non-empty string');
  }
  if (url.includes('\0')) throw new InvalidUrlError(redactUrl(url).replace(/\0/g, '\\0'), 'contains a NUL byte');
  const reader = {
    refuse(reason: string): never {
      throw new InvalidUrlError(redactUrl(url), reason);
    },
    unsupported(): never {
      const schemes = engines.flatMap((e) => e.schemes);
      throw new InvalidUrlError(
        redactUrl(url),
        `unsupported scheme (use ${schemes.slice(0, -1).join(', ')} or ${schemes.at(-1)})`,
      );
    },
  };
  for (const engine of engines) {
    const location = engine.parseUrl(url, reader);
    if (location) return { engine, location };
  }
  const bare = engines.find((e) => e.parseBarePath);
  if (!bare?.parseBarePath) return reader.unsupported();
  return { engine: bare, location: bare.parseBarePath(url, reader) };
}

export function parseStoreUrl(url: string): StoreLocation {
  return readStoreUrl(url).location;
}
