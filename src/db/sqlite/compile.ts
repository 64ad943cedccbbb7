/**
 * A fast path for turning our SQL objects into SQLite statement text and parameters. Drizzle's compiler
 * handles every kind of chunk (tables, columns, aliases, subqueries) through class-hierarchy checks and
 * builds an intermediate object per chunk; on a hot write (appendMessage) that was about a fifth of the
 * call. Our repositories only build SQL from text, nested SQL and plain values, so those are compiled
 * here directly; anything else (or inlined params) falls back to Drizzle, which stays the reference:
 * with HSDB_VERIFY_SQL=1 (the test suite sets it) every statement is compiled both ways and compared.
 */
import { SQL, StringChunk } from 'drizzle-orm';
import { SQLiteSyncDialect } from 'drizzle-orm/sqlite-core';

const drizzle = new SQLiteSyncDialect();
/** HSDB_VERIFY_SQL=1 (the test suite sets it): check every fast compile, and the append hot path, against Drizzle. */
export const verifySqlAgainstDrizzle = process.env.HSDB_VERIFY_SQL === '1';
const verify = verifySqlAgainstDrizzle;

/** Drizzle's own compile of a query: the reference our fast paths are checked against. */
export const compileWithDrizzle = (query: SQL): { sql: string; params: unknown[] } => drizzle.sqlToQuery(query);

class Unsupported extends Error {}

function walk(chunks: readonly unknown[], out: { text: string; params: unknown[] }): void {
  for (const chunk of chunks) {
    if (chunk instanceof StringChunk) {
      for (const part of chunk.value) out.text += part;
    } else if (chunk instanceof SQL) {
      if ((chunk as unknown as { shouldInlineParams: boolean }).shouldInlineParams) throw new Unsupported();
      walk(chunk.queryChunks, out);
    } else if (chunk === undefined) {
      // Drizzle renders an undefined chunk as nothing.
    } else if (
      chunk === null ||
      typeof chunk === 'string' ||
      typeof chunk === 'number' ||
      typeof chunk === 'bigint' ||
      typeof chunk === 'boolean'
    ) {
      out.text += '?';
      out.params.push(chunk);
    } else {
      throw new Unsupported();
    }
  }
}

export function compileSqlite(query: SQL): { sql: string; params: unknown[] } {
  let compiled: { sql: string; params: unknown[] };
  try {
    const out = { text: '', params: [] as unknown[] };
    walk(query.queryChunks, out);
    compiled = { sql: out.text, params: out.params };
  } catch (error) {
    if (!(error instanceof Unsupported)) throw error;
    return drizzle.sqlToQuery(query);
  }
  if (verify) {
    const reference = drizzle.sqlToQuery(query);
    if (reference.sql !== compiled.sql || JSON.stringify(reference.params) !== JSON.stringify(compiled.params)) {
      throw new Error(`fast SQLite compile differs from Drizzle's:\n${compiled.sql}\n---\n${reference.sql}`);
    }
  }
  return compiled;
}
