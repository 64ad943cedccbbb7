-- Custom SQL migration: drop the FULLTEXT search structures the block index (0007) replaced. Words, phrases,
-- prefixes and substrings are read from message_search_blocks, bm25's totals from message_search_merged; nothing
-- reads message_search any more, yet every write still paid for it: a copy of each message's searchable text, a
-- FULLTEXT index over it, its token and character counts, and three triggers on messages keeping it.
-- Kept: Hermes' LIKE scan for CJK under 3 characters reads messages itself (no trigram holds such a term).
-- IF EXISTS: a store that lost some of them (drizzle-kit push, opened with allowMissingSearchStructures) migrates.
DROP TRIGGER IF EXISTS `message_search_insert`;
--> statement-breakpoint
DROP TRIGGER IF EXISTS `message_search_update`;
--> statement-breakpoint
DROP TRIGGER IF EXISTS `message_search_delete`;
--> statement-breakpoint
-- Its own BEFORE INSERT trigger (message_search_words, 0004) and FULLTEXT index go with it.
DROP TABLE IF EXISTS `message_search`;
