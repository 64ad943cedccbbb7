/**
 * drizzle/mysql's word search structures on MariaDB: message_search follows every insert, update and delete of
 * messages with Hermes' searchable text (content, tool name, tool calls), and its FULLTEXT index answers as
 * FTS5's unicode61 index does where InnoDB can: any case, accents folded, no stopwords. The classes where
 * InnoDB answers differently are asserted as they are, so that each stays named (docs/schema.md, MySQL/MariaDB):
 * words shorter than innodb_ft_min_token_size are not indexed, and CJK text is not split into words.
 */
import type mysql from 'mysql2/promise';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { epochSecondsToDatetime } from '../../src/codecs/time.js';
import { migrateMysql } from '../../src/db/mysql/migrate.js';
import { mysqlDatabases } from '../helpers/mariadb.js';
import { probeMysql } from '../backends.js';

const unavailable = await probeMysql();

describe.skipIf(unavailable !== undefined)(
  `FULLTEXT search structures on MariaDB${unavailable ? ` (skipped: ${unavailable})` : ''}`,
  () => {
    const dbs = mysqlDatabases();
    let c: mysql.Connection;
    let t = 1_793_491_200;

    beforeAll(async () => {
      c = await dbs.fresh();
      await migrateMysql(c, { where: 'test' });
      await c.query('INSERT INTO sessions (id, source, started_at) VALUES (?, ?, ?)', [
        's',
        'cli',
        epochSecondsToDatetime(t),
      ]);
    }, 60_000);
    afterAll(() => dbs.cleanup());

    async function append(
      content: string | null,
      extra: { toolName?: string; toolCalls?: string } = {},
    ): Promise<number> {
      t += 1;
      const [result] = await c.query(
        'INSERT INTO messages (session_id, role, content, tool_name, tool_calls, timestamp) VALUES (?, ?, ?, ?, ?, ?)',
        ['s', 'user', content, extra.toolName ?? null, extra.toolCalls ?? null, epochSecondsToDatetime(t)],
      );
      return (result as { insertId: number }).insertId;
    }

    /** Ids whose search text matches a boolean-mode query, in id order. */
    async function matching(query: string): Promise<number[]> {
      const [rows] = await c.query(
        'SELECT message_id FROM message_search WHERE MATCH(search_text) AGAINST(? IN BOOLEAN MODE) ORDER BY message_id',
        [query],
      );
      return (rows as Array<{ message_id: number | string }>).map((r) => Number(r.message_id));
    }

    it("holds Hermes' searchable text: content, tool name and tool calls, NULLs as empty", async () => {
      const id = await append('checking the deploy', { toolName: 'terminal', toolCalls: '[{"command": "kubectl"}]' });
      const bare = await append(null, { toolName: 'web_search' });
      const [rows] = await c.query(
        'SELECT message_id, search_text FROM message_search WHERE message_id IN (?, ?) ORDER BY message_id',
        [id, bare],
      );
      expect((rows as Array<{ search_text: string }>).map((r) => r.search_text)).toEqual([
        'checking the deploy terminal [{"command": "kubectl"}]',
        // '_' is a space in the indexed text (migration 0004): unicode61 splits there, InnoDB would not.
        ' web search ',
      ]);
      expect(await matching('+kubectl')).toEqual([id]);
      expect(await matching('+terminal')).toEqual([id]);
      expect(await matching('+search')).toEqual([bare]);
    });

    it("records each text's length in characters and whether it is all ASCII; the store fills the word count", async () => {
      const ascii = await append('plain words only');
      const accented = await append('un café 日本語 😀');
      const [rows] = await c.query(
        'SELECT message_id, char_count, ascii_only, token_count FROM message_search WHERE message_id IN (?, ?) ORDER BY message_id',
        [ascii, accented],
      );
      expect(
        (rows as Array<Record<string, unknown>>).map((r) => [
          Number(r.char_count),
          Number(r.ascii_only),
          r.token_count,
        ]),
      ).toEqual([
        [[...'plain words only  '].length, 1, null],
        [[...'un café 日本語 😀  '].length, 0, null],
      ]);
    });

    it('follows updates and deletes of messages', async () => {
      const id = await append('a flaky pipeline');
      expect(await matching('+flaky')).toContain(id);
      await c.query('UPDATE messages SET content = ? WHERE id = ?', ['a steady pipeline', id]);
      expect(await matching('+flaky')).not.toContain(id);
      expect(await matching('+steady')).toContain(id);
      await c.query('DELETE FROM messages WHERE id = ?', [id]);
      expect(await matching('+steady')).not.toContain(id);
      const [left] = await c.query('SELECT COUNT(*) AS n FROM message_search WHERE message_id = ?', [id]);
      expect(Number((left as Array<{ n: unknown }>)[0]!.n)).toBe(0);
    });

    it('matches any case and folds accents, as unicode61 does; stopwords are searchable', async () => {
      const id = await append('Le Café servait THE Timeout about it');
      for (const word of ['cafe', 'CAFÉ', 'timeout', 'TIMEOUT', 'the', 'about', 'servait']) {
        expect(await matching(`+${word}`), word).toContain(id);
      }
    });

    it('named difference: words shorter than innodb_ft_min_token_size (3 here) are not indexed', async () => {
      const [vars] = await c.query("SHOW VARIABLES LIKE 'innodb_ft_min_token_size'");
      const minToken = Number((vars as Array<{ Value: string }>)[0]!.Value);
      const id = await append('go to ai ops now');
      expect(await matching('+ops')).toContain(id);
      // FTS5 finds these; InnoDB's index never holds them, so the store must route them elsewhere (LIKE).
      for (const word of ['go', 'to', 'ai']) {
        expect(word.length).toBeLessThan(minToken);
        expect(await matching(`+${word}`), word).not.toContain(id);
      }
    });

    it('named difference: CJK text is one token per run (no ngram parser on MariaDB), so a part of it is not found', async () => {
      const id = await append('日本語のテキスト検索');
      expect(await matching('+日本語のテキスト検索')).toContain(id);
      // FTS5's trigram table (and Hermes' LIKE path for short CJK) finds these.
      expect(await matching('+日本語')).not.toContain(id);
      expect(await matching('+検索')).not.toContain(id);
    });
  },
);
