/**
 * SQLite expressions over Hermes' content column. Structured content is stored as "\x00json:" + JSON, and
 * SQLite's text functions stop at the NUL, so both the test and the JSON body go through BLOB casts.
 */
import { type SQL, sql } from 'drizzle-orm';
import { STRUCTURED_PREFIX } from '../../codecs/content.js';

const PREFIX_HEX = Buffer.from(STRUCTURED_PREFIX, 'utf8').toString('hex').toUpperCase();
const PREFIX_BYTES = STRUCTURED_PREFIX.length;

/** True when the row alias holds structured content. */
export const sqliteIsStructured = (alias: string): SQL =>
  sql.raw(`substr(CAST(${alias}.content AS BLOB), 1, ${PREFIX_BYTES}) = X'${PREFIX_HEX}'`);

/** The JSON text of structured content (only meaningful when sqliteIsStructured holds). */
export const sqliteStructuredBody = (alias: string): SQL =>
  sql.raw(`CAST(substr(CAST(${alias}.content AS BLOB), ${PREFIX_BYTES + 1}) AS TEXT)`);

/** Content as searchable text: plain text as is, structured content as its JSON. */
export const sqliteContentText = (alias: string): SQL =>
  sql`CASE WHEN ${sqliteIsStructured(alias)} THEN ${sqliteStructuredBody(alias)} ELSE ${sql.raw(alias)}.content END`;
