/** openStore's URL handling, option validation and connection errors (no backend-specific setup). */
import { describe, expect, it } from 'vitest';
import {
  ConnectionError,
  InvalidUrlError,
  ValidationError,
  openStore,
  parseStoreUrl,
  redactUrl,
} from '../src/index.js';

describe('store URLs', () => {
  it.each([
    ['sqlite:/tmp/a.db', { backend: 'sqlite', path: '/tmp/a.db', memory: false }],
    ['sqlite:///tmp/a.db', { backend: 'sqlite', path: '/tmp/a.db', memory: false }],
    ['sqlite:relative/a.db', { backend: 'sqlite', path: 'relative/a.db', memory: false }],
    ['./state.db', { backend: 'sqlite', path: './state.db', memory: false }],
    [':memory:', { backend: 'sqlite', path: ':memory:', memory: true }],
    ['sqlite::memory:', { backend: 'sqlite', path: ':memory:', memory: true }],
    ['postgres://u:p@h:5432/db', { backend: 'postgres', url: 'postgres://u:p@h:5432/db' }],
    ['postgresql://h/db', { backend: 'postgres', url: 'postgresql://h/db' }],
    ['pglite:memory', { backend: 'pglite', dataDir: null }],
    ['pglite:memory:', { backend: 'pglite', dataDir: null }],
    ['pglite::memory:', { backend: 'pglite', dataDir: null }],
    ['pglite://memory', { backend: 'pglite', dataDir: null }],
    ['pglite:/var/data/pg', { backend: 'pglite', dataDir: '/var/data/pg' }],
    ['pglite://rel/dir', { backend: 'pglite', dataDir: 'rel/dir' }],
  ])('%s', (url, expected) => {
    expect(parseStoreUrl(url)).toEqual(expected);
  });

  it.each(['', '   ', 'sqlite:', 'pglite:', 'mongodb://h/db', 'mysql://h/', 'mysql://', 'postgres://', 'a\0b'])(
    'rejects %j with InvalidUrlError',
    (url) => {
      expect(() => parseStoreUrl(url)).toThrow(InvalidUrlError);
    },
  );

  it('redacts passwords and nothing else', () => {
    expect(redactUrl('postgres://alice:s3cr3t@db.example:5432/app')).toBe('postgres://alice:***@db.example:5432/app');
    expect(redactUrl('postgres://alice@db/app')).toBe('postgres://alice@db/app');
    expect(redactUrl('sqlite:/tmp/x.db')).toBe('sqlite:/tmp/x.db');
  });

  it('never puts the password of a bad URL in the error', () => {
    const error = (() => {
      try {
        parseStoreUrl('postgres://alice:s3cr3t@');
      } catch (e) {
        return e as Error;
      }
    })();
    expect(error).toBeInstanceOf(InvalidUrlError);
    expect(error?.message).not.toContain('s3cr3t');
  });
});

describe('openStore', () => {
  it('validates its options with a typed error naming the option', async () => {
    await expect(openStore(':memory:', { poolSize: 0 })).rejects.toMatchObject({
      constructor: ValidationError,
      field: 'options.poolSize',
    });
    await expect(openStore(':memory:', { synchronous: 'OFF' as never })).rejects.toBeInstanceOf(ValidationError);
    await expect(openStore(':memory:', { bogus: true } as never)).rejects.toBeInstanceOf(ValidationError);
  });

  it('names the server, not the password, when Postgres is unreachable', async () => {
    const error = await openStore('postgres://alice:s3cr3t@127.0.0.1:1/app', { connectTimeoutSeconds: 2 }).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(ConnectionError);
    const message = (error as ConnectionError).message;
    expect(message).toContain('postgres://alice:***@127.0.0.1:1/app');
    expect(message).not.toContain('s3cr3t');
    expect((error as ConnectionError).url).toBe('postgres://alice:***@127.0.0.1:1/app');
  });

  it('gives up on a multi-host URL whose every host refuses (postgres.js alone retries forever)', async () => {
    const started = Date.now();
    const error = await openStore('postgres://alice:s3cr3t@127.0.0.1:1,127.0.0.1:2/app', {
      connectTimeoutSeconds: 1,
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConnectionError);
    expect((error as Error).message).not.toContain('s3cr3t');
    expect(Date.now() - started).toBeLessThan(10_000);
  }, 20_000);

  it('refuses calls after close with StoreClosedError, and close twice is harmless', async () => {
    const store = await openStore(':memory:');
    await store.close();
    await store.close();
    await expect(store.migrate()).rejects.toMatchObject({ code: 'STORE_CLOSED' });
  });
});
