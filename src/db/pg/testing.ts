/** The contract fixture's SQL on Postgres and PGlite (src/testing/fixture.ts). */
import { sql } from 'drizzle-orm';
import type { EngineTesting } from '../engine.js';
import type { PgBackend } from './backend.js';

export const pgTesting: EngineTesting = {
  async exec(store, text) {
    // With the store's schema as the search_path.
    const pg = store.backend as PgBackend;
    await pg.transaction(async (tx) => {
      await tx.execute(sql`SELECT set_config('search_path', ${`"${pg.schema}"`}, true)`);
      await tx.execute(sql.raw(text));
    });
  },
  async empty(store, tables) {
    await this.exec(store, `TRUNCATE ${tables.join(', ')} RESTART IDENTITY`);
  },
  failingInsert: {
    install: [
      "CREATE FUNCTION boom() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN IF NEW.content = 'BOOM' THEN RAISE EXCEPTION 'boom'; END IF; RETURN NEW; END $$",
      'CREATE TRIGGER boom BEFORE INSERT ON messages FOR EACH ROW EXECUTE FUNCTION boom()',
    ],
    remove: ['DROP TRIGGER boom ON messages', 'DROP FUNCTION boom()'],
  },
};
