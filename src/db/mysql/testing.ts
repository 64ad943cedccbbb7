/** The contract fixture's SQL on MySQL/MariaDB (src/testing/fixture.ts). */
import type { EngineTesting } from '../engine.js';
import type { MysqlBackend } from './backend.js';

export const mysqlTesting: EngineTesting = {
  async exec(store, text) {
    // One statement per call (the store's connections run no multi-statement text), in ANSI mode as the store's.
    await (store.backend as MysqlBackend).withConnection(async (c) => {
      await c.query(text);
    });
  },
  async empty(store, tables) {
    // TRUNCATE restarts AUTO_INCREMENT; it refuses a table other tables reference unless checks are off.
    await (store.backend as MysqlBackend).withConnection(async (c) => {
      await c.query('SET foreign_key_checks = 0');
      try {
        // TRUNCATE fires no trigger: the search index's tables are emptied with the messages.
        const index = ['message_search_blocks', 'message_search_recent', 'message_search_removed'];
        for (const t of [...tables, ...index]) await c.query(`TRUNCATE TABLE ${t}`);
        await c.query('UPDATE message_search_merged SET messages = 0, tokens = 0');
      } finally {
        await c.query('SET foreign_key_checks = 1');
      }
    });
  },
  failingInsert: {
    install: [
      "CREATE TRIGGER boom BEFORE INSERT ON messages FOR EACH ROW BEGIN IF NEW.content = 'BOOM' THEN SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'boom'; END IF; END",
    ],
    remove: ['DROP TRIGGER boom'],
  },
};
