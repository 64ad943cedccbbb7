/**
 * Store URLs: which backend to open, and how to print a URL without its password.
 *
 *   sqlite:<path> | sqlite://<path> | <bare path> | :memory: | sqlite::memory:   better-sqlite3
 *   postgres://… | postgresql://…                                               postgres.js pool
 *   pglite:<dir> | pglite://<dir> | pglite:memory                               embedded Postgres
 */
import { InvalidUrlError } from '../errors.js';

export type StoreLocation =
  | { backend: 'sqlite'; path: string; memory: boolean }
  | { backend: 'postgres'; url: string }
  | { backend: 'pglite'; dataDir: string | null };

/** Replace the password of a `scheme://user:password@host` URL with `***`. Other text is returned as is. */
export function redactUrl(url: string): string {
  return url.replace(/^([a-z][a-z0-9+.-]*:\/\/[^/:@]*):[^@/]*@/i, '$1:***@');
}

export function parseStoreUrl(url: string): StoreLocation {
  if (typeof url !== 'string' || url.trim() === '') {
    throw new InvalidUrlError(String(url), 'expected a non-empty string');
  }
  if (url.includes('\0')) throw new InvalidUrlError(redactUrl(url).replace(/\0/g, '\\0'), 'contains a NUL byte');

  if (/^postgres(ql)?:\/\//i.test(url)) {
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      throw new InvalidUrlError(redactUrl(url), 'not a valid postgres:// URL');
    }
    if (!parsed.hostname && !parsed.searchParams.get('host')) {
      throw new InvalidUrlError(redactUrl(url), 'no host');
    }
    return { backend: 'postgres', url };
  }

  const pglite = /^pglite:(?:\/\/)?(.*)$/i.exec(url);
  if (pglite) {
    const dir = pglite[1] ?? '';
    if (dir === '') throw new InvalidUrlError(url, 'pglite: needs a data directory or "memory"');
    return { backend: 'pglite', dataDir: dir === 'memory' || dir === ':memory:' ? null : dir };
  }

  const sqlite = /^sqlite:(?:\/\/)?(.*)$/i.exec(url);
  const path = sqlite ? (sqlite[1] ?? '') : url;
  if (path === '') throw new InvalidUrlError(url, 'sqlite: needs a file path or ":memory:"');
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(path)) {
    throw new InvalidUrlError(redactUrl(url), 'unsupported scheme (use sqlite:, postgres://, postgresql:// or pglite:)');
  }
  const memory = path === ':memory:';
  return { backend: 'sqlite', path: memory ? ':memory:' : path, memory };
}
