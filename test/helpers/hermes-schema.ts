/** The Hermes v11 schema as the Python reference creates it, built from the DDL quoted in the spec. */
import fs from 'node:fs';
import Database from 'better-sqlite3';
import type { SchemaInfo } from '../../src/db/introspect.js';
import { introspectSqlite } from '../../src/db/sqlite/introspect.js';

export const HERMES_V11_DDL = fs.readFileSync(new URL('../fixtures/hermes-v11-schema.sql', import.meta.url), 'utf8');

/** Hermes' FTS_SQL + FTS_TRIGRAM_SQL virtual tables and triggers, by name (spec §1.3-§1.4). */
export const HERMES_FTS_TABLES = ['messages_fts', 'messages_fts_trigram'];
export const HERMES_FTS_TRIGGERS = [
  'messages_fts_insert',
  'messages_fts_delete',
  'messages_fts_update',
  'messages_fts_trigram_insert',
  'messages_fts_trigram_delete',
  'messages_fts_trigram_update',
];

export function hermesV11Schema(): SchemaInfo {
  const scratch = new Database(':memory:');
  try {
    scratch.exec(HERMES_V11_DDL);
    return introspectSqlite(scratch);
  } finally {
    scratch.close();
  }
}

/** Hermes' own integrity expectations, straight from the spec (§1.1, issue text): guards against a blind lens. */
export const HERMES_COLUMN_COUNTS = { sessions: 30, messages: 15 } as const;
