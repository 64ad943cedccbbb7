/**
 * appendMessage's hot path on SQLite: the two statements of the generic operation (appendMessageOp in
 * sql/messages.ts), prepared once per connection and run with bare parameters, with no SQL objects,
 * generator or compile per call. The statement text is Drizzle's compile of the SQL appendMessageOp yields;
 * with HSDB_VERIFY_SQL=1 (the test suite sets it) every call also builds that SQL and checks text and
 * parameters against the hot path's, so the two cannot drift apart unnoticed.
 */
import type { Database, Statement } from 'better-sqlite3';
import type { SQL } from 'drizzle-orm';
import { encodeStoredContent } from '../../codecs/content.js';
import type { JsonInput } from '../../codecs/json.js';
import { pythonJsonDumps } from '../../codecs/python-json.js';
import { SessionNotFoundError } from '../../errors.js';
import { appendMessageOp, jsonIfTruthy } from '../../sql/messages.js';
import type { AppendedMessage, Spelling } from '../dialect.js';
import { compileWithDrizzle, verifySqlAgainstDrizzle } from './compile.js';

/** One message's parameters, encoded before the transaction begins (as the generic operation encodes them). */
export interface AppendParams {
  readonly sessionId: string;
  readonly toolCallCount: number;
  /** The INSERT's parameters, in the order of messageValues' VALUES tuple. */
  readonly row: readonly unknown[];
}

/** The spelling's json() after jsonIfTruthy, as messageValues composes them. */
const storedJson = (value: JsonInput | null | undefined): string | null => {
  const kept = jsonIfTruthy(value);
  return kept === null || kept === undefined ? null : pythonJsonDumps(kept);
};

/** Encode a message for the hot path: the values appendMessageOp binds, in its order. */
export function appendParams(m: AppendedMessage): AppendParams {
  return {
    sessionId: m.sessionId,
    toolCallCount: m.toolCallCount,
    row: [
      m.sessionId,
      m.role,
      m.toolCallId ?? null,
      storedJson(m.toolCalls),
      m.toolName ?? null,
      m.timestamp,
      m.tokenCount ?? null,
      m.finishReason ?? null,
      m.reasoning ?? null,
      m.reasoningContent ?? null,
      storedJson(m.reasoningDetails),
      storedJson(m.codexReasoningItems),
      storedJson(m.codexMessageItems),
      encodeStoredContent(m.content),
    ],
  };
}

/** The counter UPDATE and the INSERT that appendMessageOp yields for `m`, as SQL objects. */
export function appendMessageQueries(d: Spelling, m: AppendedMessage): { bump: SQL; insert: SQL } {
  const op = appendMessageOp(d, m)();
  const bump = op.next();
  const insert = bump.done ? bump : op.next(1);
  op.return(0);
  if (bump.done || insert.done || bump.value.mode !== 'changes' || insert.value.mode !== 'inserted') {
    throw new Error('appendMessageOp no longer yields an UPDATE then an INSERT: update the SQLite hot path');
  }
  return { bump: bump.value.sql, insert: insert.value.sql };
}

const SAMPLE: AppendedMessage = { sessionId: '', role: '', content: null, timestamp: 0, toolCallCount: 0 };

export class SqliteAppender {
  private prepared: { bump: Statement; insert: Statement; bumpText: string; insertText: string } | undefined;

  constructor(
    private readonly client: Database,
    private readonly spelling: Spelling,
  ) {}

  /** The statement text, compiled by Drizzle from appendMessageOp's SQL (its shape does not depend on the values). */
  texts(): { bump: string; insert: string } {
    const { bump, insert } = appendMessageQueries(this.spelling, SAMPLE);
    return { bump: compileWithDrizzle(bump).sql, insert: compileWithDrizzle(insert).sql };
  }

  /** Encode `m` (outside the transaction); under HSDB_VERIFY_SQL=1 also check it against the generic path. */
  params(m: AppendedMessage): AppendParams {
    const params = appendParams(m);
    if (verifySqlAgainstDrizzle) this.verify(m, params);
    return params;
  }

  /** Inside the write transaction: bump the counters (the existence check), insert the row, return its id. */
  run(params: AppendParams): number {
    const s = this.statements();
    if (s.bump.run(params.toolCallCount, params.sessionId).changes === 0) {
      throw new SessionNotFoundError(params.sessionId);
    }
    const id = s.insert.run(params.row).lastInsertRowid;
    return typeof id === 'bigint' ? Number(id) : id;
  }

  private statements() {
    if (!this.prepared) {
      const texts = this.texts();
      this.prepared = {
        // run(): the change count and the new rowid, with no row to build.
        bump: this.client.prepare(texts.bump),
        insert: this.client.prepare(texts.insert),
        bumpText: texts.bump,
        insertText: texts.insert,
      };
    }
    return this.prepared;
  }

  private verify(m: AppendedMessage, params: AppendParams): void {
    const generic = appendMessageQueries(this.spelling, m);
    const bump = compileWithDrizzle(generic.bump);
    const insert = compileWithDrizzle(generic.insert);
    const expected = this.prepared ? { bump: this.prepared.bumpText, insert: this.prepared.insertText } : this.texts();
    const same = (a: readonly unknown[], b: readonly unknown[]) =>
      a.length === b.length && a.every((v, i) => Object.is(v, b[i]));
    if (
      bump.sql !== expected.bump ||
      insert.sql !== expected.insert ||
      !same(bump.params, [params.toolCallCount, params.sessionId]) ||
      !same(insert.params, params.row)
    ) {
      throw new Error(
        `SQLite appendMessage hot path differs from appendMessageOp compiled by Drizzle:\n${JSON.stringify({ bump, insert, params })}`,
      );
    }
  }
}
