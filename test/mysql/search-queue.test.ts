/**
 * drizzle/mysql's search queue triggers (migration 0007) on MariaDB, written to by plain SQL as an app would:
 * an inserted message is queued; a change of its searchable text (content, tool name, tool calls) queues it
 * again and, once it was merged, keeps its old text for removal from the blocks; a delete does the same; a
 * change of any other column queues nothing. Migration 0008 left no FULLTEXT structure behind; the structure
 * check names what is missing.
 */
import type mysql from 'mysql2/promise';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { epochSecondsToDatetime } from '../../src/codecs/time.js';
import { migrateMysql, mysqlMigrationStatus } from '../../src/db/mysql/migrate.js';
import { missingMysqlSearchStructures } from '../../src/db/mysql/search-structures.js';
import { mysqlDatabases } from '../helpers/mariadb.js';
import { probeMysql } from '../backends.js';

const unavailable = await probeMysql();

describe.skipIf(unavailable !== undefined)(
  `search queue triggers on MariaDB${unavailable ? ` (skipped: ${unavailable})` : ''}`,
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

    async function append(content: string | null, toolName: string | null = null): Promise<number> {
      t += 1;
      const [result] = await c.query(
        'INSERT INTO messages (session_id, role, content, tool_name, timestamp) VALUES (?, ?, ?, ?, ?)',
        ['s', 'user', content, toolName, epochSecondsToDatetime(t)],
      );
      return (result as { insertId: number }).insertId;
    }
    const query = async (text: string, params: unknown[] = []) =>
      (await c.query(text, params))[0] as Array<Record<string, unknown>>;
    const queue = async (id: number) =>
      (await query('SELECT queued, version FROM message_search_recent WHERE message_id = ?', [id])).map((r) => ({
        queued: Number(r.queued),
        version: String(r.version),
      }));
    const removed = async (id: number) =>
      (
        await query('SELECT content, tool_name FROM message_search_removed WHERE message_id = ? ORDER BY seq', [id])
      ).map((r) => [r.content === null ? null : String(r.content), r.tool_name === null ? null : String(r.tool_name)]);
    /** What a merge does to a message: its recent row leaves (its postings are in the blocks). */
    const merge = (id: number) => c.query('DELETE FROM message_search_recent WHERE message_id = ?', [id]);

    it('queues every inserted message, with a version of its own', async () => {
      const a = await append('checking the deploy');
      const b = await append(null, 'web_search');
      const [qa, qb] = [await queue(a), await queue(b)];
      expect([qa.length, qa[0]!.queued, qb.length, qb[0]!.queued]).toEqual([1, 1, 1, 1]);
      expect(qa[0]!.version).not.toBe(qb[0]!.version);
    });

    it('a change of searchable text queues the message again; a merged one also keeps its old text', async () => {
      const id = await append('first text', 'terminal');
      await c.query(
        "UPDATE message_search_recent SET queued = false, words = 'x', trigrams = 'x' WHERE message_id = ?",
        [id],
      );
      const before = (await queue(id))[0]!.version;
      await c.query("UPDATE messages SET content = 'second text' WHERE id = ?", [id]);
      const after = await queue(id);
      expect(after[0]!.queued).toBe(1);
      expect(after[0]!.version).not.toBe(before);
      // Not merged yet: nothing to take out of the blocks.
      expect(await removed(id)).toEqual([]);
      await merge(id);
      await c.query("UPDATE messages SET tool_name = 'browser' WHERE id = ?", [id]);
      expect(await removed(id)).toEqual([['second text', 'terminal']]);
      expect((await queue(id))[0]!.queued).toBe(1);
    });

    it('a change of another column queues nothing', async () => {
      const id = await append('steady');
      await merge(id);
      await c.query('UPDATE messages SET token_count = 7, finish_reason = ? WHERE id = ?', ['stop', id]);
      expect(await queue(id)).toEqual([]);
      expect(await removed(id)).toEqual([]);
    });

    it('a delete drops a queued message, and keeps a merged one’s text for removal', async () => {
      const queued = await append('gone before merge');
      const merged = await append('gone after merge', 'terminal');
      await merge(merged);
      await c.query('DELETE FROM messages WHERE id IN (?, ?)', [queued, merged]);
      expect(await queue(queued)).toEqual([]);
      expect(await removed(queued)).toEqual([]);
      expect(await removed(merged)).toEqual([['gone after merge', 'terminal']]);
    });

    it('leaves no FULLTEXT structure (0008)', async () => {
      const left = await query(
        `SELECT (SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'message_search')
           + (SELECT COUNT(*) FROM information_schema.TRIGGERS WHERE TRIGGER_SCHEMA = DATABASE() AND TRIGGER_NAME LIKE 'message\\_search\\_%') AS n`,
      );
      expect(Number(left[0]!.n)).toBe(0);
    });

    it('the structure check names a queue trigger or table that is gone (as drizzle-kit push drops them)', async () => {
      const applied = (await mysqlMigrationStatus(c)).applied;
      expect(await missingMysqlSearchStructures(c, applied)).toEqual([]);
      await c.query('DROP TRIGGER messages_search_queue_update');
      await c.query('DROP TABLE message_search_removed');
      expect(await missingMysqlSearchStructures(c, applied)).toEqual([
        { kind: 'table', name: 'message_search_removed' },
        { kind: 'trigger', name: 'messages_search_queue_update' },
      ]);
    });
  },
);
