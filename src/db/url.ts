/**
 * Store URLs: which backend to open, and how to print a URL without its password.
 *
 *   sqlite:<path> | sqlite://<path> | <bare path> | :memory: | sqlite::memory:   better-sqlite3
 *   postgres://… | postgresql://…                                               postgres.js pool
 *   pglite:<dir> | pglite://<dir> | pglite:memory[:]                            embedded Postgres
 *   mysql://… | mariadb://…                                                      mysql2 pool
 */
import { InvalidUrlError } from '../errors.js';

export type StoreLocation =
  | { backend: 'sqlite'; path: string; memory: boolean }
  | { backend: 'postgres'; url: string }
  | { backend: 'pglite'; dataDir: string | null }
  | { backend: 'mysql'; url: string };

/** The pglite: URL forms of an in-memory instance (no data directory). */
const IN_MEMORY_PGLITE = new Set(['memory', ':memory:', 'memory:']);

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
 * Where the authority of a URL-like string starts: after the first `://`, or after `postgres:` written without
 * slashes. -1 when there is none (an SQLite path, `pglite:dir`).
 */
function authorityStart(url: string): number {
  // The URL's own scheme first: a password may itself hold `://` (postgres:app:pw://x@host).
  const scheme = /^\s*[a-z][a-z0-9+.-]*:\/\//i.exec(url);
  if (scheme) return scheme[0].length;
  const bare = /^\s*postgres(?:ql)?:/i.exec(url);
  if (bare) return bare[0].length;
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
  for (const parse of [() => new URL(url), () => postgresJsUrl(url).parsed]) {
    try {
      add(parse().password);
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

/**
 * Parse a postgres:// URL as postgres.js 3.4 does (src/index.js, parseUrl): the host list runs from the first
 * `@` to the first `/` or `?`, and only its first host is given to the URL parser. Throws when postgres.js would.
 */
function postgresJsUrl(url: string): { parsed: URL; hosts: string } {
  let hosts = url.slice(url.indexOf('://') + 3).split(/[?/]/)[0] ?? '';
  hosts = decodeURIComponent(hosts.slice(hosts.indexOf('@') + 1));
  const parsed = new URL(url.replace(hosts, hosts.split(',')[0] ?? ''));
  decodeURIComponent(parsed.username);
  decodeURIComponent(parsed.password);
  return { parsed, hosts };
}

/** Why postgres.js would not take this postgres:// URL (or would misread it), or null when it takes it. */
function postgresUrlProblem(url: string): string | null {
  let parsed: URL;
  let hosts: string;
  try {
    ({ parsed, hosts } = postgresJsUrl(url));
  } catch {
    return 'not a valid postgres:// URL (percent-encode any of : / @ ? # % in the user name or password)';
  }
  // postgres.js ends the user info at the first @, the URL parser at the last: with a host list, the rest of
  // the password would become host names to look up and connect to.
  if (hosts.includes(',') && hosts.includes('@')) {
    return 'with several hosts, an @ in the user name or password must be percent-encoded (%40)';
  }
  if (!parsed.hostname && !parsed.searchParams.get('host')) return 'no host';
  return null;
}

export function parseStoreUrl(url: string): StoreLocation {
  if (typeof url !== 'string' || url.trim() === '') {
    // A URL object's text would carry its password.
    throw new InvalidUrlError(redactUrl(String(url)), 'expected a non-empty string');
  }
  if (url.includes('\0')) throw new InvalidUrlError(redactUrl(url).replace(/\0/g, '\\0'), 'contains a NUL byte');

  if (/^postgres(ql)?:\/\//i.test(url)) {
    const problem = postgresUrlProblem(url);
    if (problem) throw new InvalidUrlError(redactUrl(url), problem);
    return { backend: 'postgres', url };
  }
  if (/^\s*postgres(ql)?:/i.test(url)) {
    throw new InvalidUrlError(redactUrl(url), 'a Postgres URL starts with postgres:// or postgresql://');
  }

  if (/^(mysql|mariadb):\/\//i.test(url)) {
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      throw new InvalidUrlError(
        redactUrl(url),
        'not a valid mysql:// URL (percent-encode any of : / @ ? # % in the user name or password)',
      );
    }
    if (!parsed.hostname) throw new InvalidUrlError(redactUrl(url), 'no host');
    if (parsed.pathname.replace(/^\//, '') === '') throw new InvalidUrlError(redactUrl(url), 'no database name');
    return { backend: 'mysql', url };
  }

  const pglite = /^pglite:(?:\/\/)?(.*)$/i.exec(url);
  if (pglite) {
    const dir = pglite[1] ?? '';
    if (dir === '') throw new InvalidUrlError(url, 'pglite: needs a data directory or "memory"');
    // "memory:" too, by analogy with sqlite::memory: (it once made a directory literally named "memory:").
    return { backend: 'pglite', dataDir: IN_MEMORY_PGLITE.has(dir) ? null : dir };
  }

  const sqlite = /^sqlite:(?:\/\/)?(.*)$/i.exec(url);
  const path = sqlite ? (sqlite[1] ?? '') : url;
  if (path === '') throw new InvalidUrlError(url, 'sqlite: needs a file path or ":memory:"');
  if (/^\s*[a-z][a-z0-9+.-]*:\/\//i.test(path)) {
    throw new InvalidUrlError(
      redactUrl(url),
      'unsupported scheme (use sqlite:, postgres://, postgresql://, pglite:, mysql:// or mariadb://)',
    );
  }
  const memory = path === ':memory:';
  return { backend: 'sqlite', path: memory ? ':memory:' : path, memory };
}
