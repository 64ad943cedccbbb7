-- Custom SQL migration: drop the word and substring structures the block index (0010) replaced.
-- Search reads words, phrases, prefixes and trigrams from message_search_blocks and bm25's totals from
-- message_search_merged; nothing reads what follows any more, yet every write still paid for it: a generated
-- tsvector and word count per message, two GIN indexes over the whole searchable text and four statement
-- triggers keeping message_search_stats.
--
-- Kept: message_search_text() (snippet text), message_word_window(), message_cjk_grams(), the search_cjk column
-- and idx_messages_search_cjk, which narrow Hermes' LIKE scan for CJK terms under 3 characters (no trigram
-- holds them). pg_trgm stays installed (0000): an extension other objects of the database may use.
--
-- No table is rewritten: DROP COLUMN only marks the columns dropped, so it is instant; their bytes stay in the
-- existing rows until those rows are rewritten (an UPDATE, or VACUUM FULL messages when the space matters).
-- IF EXISTS: a store that lost some of them (drizzle-kit push, opened with allowMissingSearchStructures) migrates.
DROP TRIGGER IF EXISTS messages_search_stats_insert ON messages;
--> statement-breakpoint
DROP TRIGGER IF EXISTS messages_search_stats_delete ON messages;
--> statement-breakpoint
DROP TRIGGER IF EXISTS messages_search_stats_update ON messages;
--> statement-breakpoint
DROP TRIGGER IF EXISTS messages_search_stats_truncate ON messages;
--> statement-breakpoint
DROP FUNCTION IF EXISTS message_search_stats_add();
--> statement-breakpoint
DROP FUNCTION IF EXISTS message_search_stats_remove();
--> statement-breakpoint
DROP FUNCTION IF EXISTS message_search_stats_change();
--> statement-breakpoint
DROP FUNCTION IF EXISTS message_search_stats_reset();
--> statement-breakpoint
DROP TABLE IF EXISTS message_search_stats;
--> statement-breakpoint
DROP INDEX IF EXISTS idx_messages_search_vector;
--> statement-breakpoint
DROP INDEX IF EXISTS idx_messages_search_trgm;
--> statement-breakpoint
ALTER TABLE messages DROP COLUMN IF EXISTS search_vector, DROP COLUMN IF EXISTS search_length;
--> statement-breakpoint
DROP FUNCTION IF EXISTS message_word_vector(text);
