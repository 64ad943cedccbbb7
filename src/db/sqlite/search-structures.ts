/** SQLite's search structures (FTS5 tables and their triggers), and the one catalog query that finds them. */
import type Database from 'better-sqlite3';
import { type MissingStructure, expected } from '../search-structures.js';

type SqliteKind = 'table' | 'trigger';

const SQLITE_STRUCTURES: Record<string, ReadonlyArray<[SqliteKind, string]>> = {
  '0002_fts5_search': [
    ['table', 'messages_fts'],
    ['table', 'messages_fts_trigram'],
    ...['insert', 'delete', 'update'].flatMap(
      (op): Array<[SqliteKind, string]> => [
        ['trigger', `messages_fts_${op}`],
        ['trigger', `messages_fts_trigram_${op}`],
      ],
    ),
  ],
};

export function missingSqliteSearchStructures(
  client: Database.Database,
  appliedTags: readonly string[],
): MissingStructure[] {
  const wanted = expected(SQLITE_STRUCTURES, appliedTags);
  if (wanted.length === 0) return [];
  const present = new Set(
    (
      client
        .prepare(`SELECT type || ' ' || name AS object FROM sqlite_master WHERE type IN ('table', 'trigger')`)
        .all() as Array<{ object: string }>
    ).map((r) => r.object),
  );
  return wanted.filter((w) => !present.has(`${w.kind} ${w.name}`));
}
