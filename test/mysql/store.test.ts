/**
 * What the MySQL/MariaDB backend must get right beyond the contract suite (which it runs in contract.test.ts):
 * the URL forms, a refused connection that never shows the password, and claimHandoff as one compare-and-set
 * without UPDATE … RETURNING (MariaDB has none).
 */
import { afterAll, describe, expect, it } from 'vitest';
import { ConnectionError, InvalidUrlError, type SessionStore, openStore, parseStoreUrl } from '../../src/index.js';
import { mysqlDatabases } from '../helpers/mariadb.js';
import { MYSQL_URL, probeMysql } from '../backends.js';

const unavailable = await probeMysql();

describe('mysql:// and mariadb:// URLs', () => {
  it('parse to the MySQL backend, and a URL without a host or database is refused naming the problem', () => {
    expect(parseStoreUrl('mysql://app:pw@db.example:3306/hermes')).toEqual({
      backend: 'mysql',
      url: 'mysql://app:pw@db.example:3306/hermes',
    });
    expect(parseStoreUrl('mariadb://db/hermes').backend).toBe('mysql');
    expect(() => parseStoreUrl('mysql://app:s3cret@db.example:3306/')).toThrow(/no database name/);
    expect(() => parseStoreUrl('mysql://app:s3cret@db.example:3306/')).toThrow(InvalidUrlError);
    try {
      parseStoreUrl('mysql://app:s3cret@db.example:3306/');
    } catch (error) {
      expect(String((error as Error).message)).not.toContain('s3cret');
    }
  });
});

describe.skipIf(unavailable !== undefined)(
  `MySQL/MariaDB store${unavailable ? ` (skipped: ${unavailable})` : ''}`,
  () => {
    const databases = mysqlDatabases();
    afterAll(() => databases.cleanup());

    async function freshStore(): Promise<SessionStore> {
      const c = await databases.fresh();
      const [rows] = await c.query('SELECT DATABASE() AS name');
      const url = new URL(MYSQL_URL);
      url.pathname = `/${(rows as Array<{ name: string }>)[0]!.name}`;
      return openStore(url.toString(), { poolSize: 20 });
    }

    it('refuses a login with a ConnectionError naming the user and never the password (message, stack, cause)', async () => {
      const url = new URL(MYSQL_URL);
      url.username = 'root';
      url.password = 'Wr0ngSecretPassword';
      // A user that does not exist on the server: the server refuses the login.
      url.username = 'hsdb_nobody';
      const error = await openStore(url.toString()).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(ConnectionError);
      const seen = [
        String((error as Error).message),
        String((error as Error).stack),
        JSON.stringify(error),
        String(((error as Error).cause as Error | undefined)?.message),
        String(((error as Error).cause as Error | undefined)?.stack),
      ].join('\n');
      expect(seen).toMatch(/hsdb_nobody/);
      expect(seen).not.toContain('Wr0ngSecretPassword');
    });

    it('claimHandoff: exactly one of 16 concurrent claimers wins, 50 times over', async () => {
      const store = await freshStore();
      try {
        await store.createSession('h', 'telegram');
        for (let round = 0; round < 50; round++) {
          expect(await store.requestHandoff('h', 'discord')).toBe(true);
          const claims = await Promise.all(Array.from({ length: 16 }, () => store.claimHandoff('h')));
          expect(claims.filter(Boolean)).toHaveLength(1);
          expect((await store.getHandoffState('h'))?.state).toBe('running');
          await store.completeHandoff('h');
        }
      } finally {
        await store.close();
      }
    });

    it('appends from 16 callers to 4 sessions: every id distinct, each session in call order, counters exact', async () => {
      const store = await freshStore();
      try {
        const sessions = ['a', 'b', 'c', 'd'];
        for (const s of sessions) await store.createSession(s, 'cli');
        const calls = Array.from({ length: 400 }, (_, i) =>
          store.appendMessage(sessions[i % 4]!, 'user', `message ${i}`),
        );
        const ids = await Promise.all(calls);
        expect(new Set(ids).size).toBe(400);
        for (const [k, s] of sessions.entries()) {
          const got = await store.getMessages(s);
          expect(got.map((m) => m.content)).toEqual(Array.from({ length: 100 }, (_, j) => `message ${j * 4 + k}`));
          expect((await store.getSession(s))?.messageCount).toBe(100);
        }
      } finally {
        await store.close();
      }
    });
  },
);
