/**
 * appendMessage on MySQL/MariaDB: one CALL of the stored procedure of drizzle/mysql/0002_append_procedure.sql
 * (appendMessageOp's two statements in one transaction, in one round trip instead of four). Parameters are
 * encoded before the call waits for its session's lane, exactly as the generic operation binds them.
 */
import { epochSecondsToDatetime } from '../../codecs/time.js';
import type { AppendedMessage } from '../dialect.js';
import { appendParams } from '../sqlite/append.js';

export const APPEND_CALL = 'CALL hsdb_append_message(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)';

/** The procedure's parameters: the INSERT's values in messageValues' order, then the tool-call count. */
export function mysqlAppendParams(m: AppendedMessage): unknown[] {
  const { row, toolCallCount } = appendParams(m);
  const params = [...row, toolCallCount];
  // The time is the row's sixth value: epoch seconds, stored as DATETIME(6) in UTC.
  params[5] = epochSecondsToDatetime(row[5] as number);
  return params;
}

/** The new id from the CALL's answer (its first result set), or null when the session does not exist. */
export function appendedId(result: unknown): number | null {
  const sets = result as Array<Array<{ id: unknown }>>;
  const id = sets[0]?.[0]?.id;
  return id === null || id === undefined ? null : Number(id);
}
