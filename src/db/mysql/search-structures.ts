/** MySQL/MariaDB's search structures (tables, indexes, triggers on messages), and the catalog query. */
import { type MissingStructure, expected } from '../search-structures.js';
import type { MysqlQueryable } from './introspect.js';

type MysqlKind = 'table' | 'index' | 'trigger';

/** The three row triggers (insert, delete, update) named `<prefix>_<operation>`. */
const rowTriggers = (prefix: string): Array<[MysqlKind, string]> =>
  ['insert', 'delete', 'update'].map((op) => ['trigger', `${prefix}_${op}`]);

/** Triggers are those of the messages table; indexes are named by table (`table.index`). */
const MYSQL_STRUCTURES: Record<string, ReadonlyArray<[MysqlKind, string]>> = {
  '0001_fulltext_search': [['table', 'message_search'], ...rowTriggers('message_search')],
  '0007_message_search_blocks': [
    ...['blocks', 'recent', 'removed', 'merged'].map((t): [MysqlKind, string] => ['table', `message_search_${t}`]),
    ['index', 'message_search_recent.idx_message_search_recent_queued'],
    ...rowTriggers('messages_search_queue'),
  ],
};

/** What a later migration drops of the structures above. */
const MYSQL_DROPPED: Record<string, ReadonlyArray<[MysqlKind, string]>> = {
  '0008_drop_fulltext_search': [['table', 'message_search'], ...rowTriggers('message_search')],
};

export async function missingMysqlSearchStructures(
  c: MysqlQueryable,
  appliedTags: readonly string[],
): Promise<MissingStructure[]> {
  const wanted = expected(MYSQL_STRUCTURES, appliedTags, MYSQL_DROPPED);
  if (wanted.length === 0) return [];
  const [found] = await c.query(
    `SELECT CONCAT('table ', TABLE_NAME) AS n FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE()
     UNION SELECT CONCAT('index ', TABLE_NAME, '.', INDEX_NAME) FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = DATABASE()
     UNION SELECT CONCAT('trigger ', TRIGGER_NAME) FROM information_schema.TRIGGERS
       WHERE TRIGGER_SCHEMA = DATABASE() AND EVENT_OBJECT_TABLE = 'messages'`,
  );
  const present = new Set((found as Array<{ n: unknown }>).map((r) => String(r.n)));
  // information_schema shows triggers only to a user with the TRIGGER privilege: seeing none on messages (which
  // also has 0006's activity triggers) means this user cannot tell, not that they are gone.
  const seesTriggers = [...present].some((n) => n.startsWith('trigger '));
  // In the order they are listed.
  return wanted.filter((w) => (w.kind !== 'trigger' || seesTriggers) && !present.has(`${w.kind} ${w.name}`));
}
