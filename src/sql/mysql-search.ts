/**
 * Message search on MySQL/MariaDB. Not built yet (issue 14, part d: the query AST in FULLTEXT boolean mode,
 * short words and CJK through LIKE): every statement refuses with a DatabaseError that says so, rather than
 * answering differently from the other backends.
 */
import { DatabaseError } from '../errors.js';
import type { SearchStatements } from '../db/dialect.js';
import type { TableNames } from './tables.js';

export const MYSQL_SEARCH_UNAVAILABLE = 'HSDB_MYSQL_SEARCH_UNAVAILABLE';

const WHY =
  'message search is not available on MySQL/MariaDB stores yet: search a SQLite or Postgres copy (hermes-sessiondb copy)';

const unavailable = (): never => {
  throw new DatabaseError(WHY, MYSQL_SEARCH_UNAVAILABLE);
};

export function mysqlSearch(_t: TableNames): SearchStatements {
  return {
    page: unavailable,
    pageText: unavailable,
    pageTextChunk: 50,
    unavailable: WHY,
    like: unavailable,
    matchesMessage: unavailable,
  };
}
