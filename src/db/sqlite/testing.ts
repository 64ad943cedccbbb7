/** The contract fixture's SQL on SQLite (src/testing/fixture.ts). */
import type { EngineTesting } from '../engine.js';
import type { SqliteBackend } from './backend.js';

export const sqliteTesting: EngineTesting = {
  async exec(store, text) {
    (store.backend as SqliteBackend).client.exec(text);
  },
  async empty(store, tables) {
    await this.exec(
      store,
      `UPDATE sessions SET parent_session_id = NULL; ${tables.map((t) => `DELETE FROM ${t};`).join(' ')}
       DELETE FROM sqlite_sequence WHERE name = 'messages';`,
    );
  },
  failingInsert: {
    install: [
      "CREATE TRIGGER boom BEFORE INSERT ON messages WHEN NEW.content = 'BOOM' BEGIN SELECT RAISE(ABORT, 'boom'); END",
    ],
    remove: ['DROP TRIGGER boom'],
  },
};
