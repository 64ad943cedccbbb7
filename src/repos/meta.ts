/** state_meta: a small key/value store (auto-prune bookkeeping, the Telegram topic schema version, …). */
import { sql } from 'drizzle-orm';
import type { Spelling } from '../db/dialect.js';
import { type Op, exec, first } from '../db/ops.js';
import type { RepoContext } from './context.js';
import * as v from '../validation.js';

/** Upsert one key; usable inside another repository's write. */
export function setMetaOp(d: Spelling, key: string, value: string | null): () => Op<void> {
  return function* () {
    // "key" quoted: a reserved word in MySQL.
    yield* exec(sql`INSERT INTO ${d.t.stateMeta} ("key", value) VALUES (${d.text(key)}, ${d.text(value)})
                    ${d.onConflict(['"key"'], ['value'])}`);
  };
}

export class MetaRepo {
  constructor(private readonly ctx: RepoContext) {}

  get(key: string): Promise<string | null> {
    const { d, run } = this.ctx;
    return run.read(function* () {
      const row = yield* first<{ value: unknown }>(
        sql`SELECT value FROM ${d.t.stateMeta} WHERE "key" = ${d.text(key)}`,
      );
      return row?.value === null || row?.value === undefined ? null : String(row.value);
    });
  }

  /** Validated as setMeta is. */
  async set(key: string, value: string | null): Promise<void> {
    key = v.validate(v.metaKey, key, 'key');
    value = v.validate(v.optionalText, value, 'value') ?? null;
    return this.ctx.run.write(setMetaOp(this.ctx.d, key, value));
  }
}
