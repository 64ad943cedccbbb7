-- Custom SQL migration: what word search on MySQL/MariaDB needs beyond migration 0001's FULLTEXT index
-- (drizzle-kit models neither FULLTEXT tables nor triggers). The index only narrows a search; each candidate
-- is judged and ranked by FTS5's rules in TypeScript (sql/mysql-search.ts), and ranking is FTS5's bm25.
--
-- 1. token_count: each message's length in unicode61 tokens, bm25's document length (their sum gives the
--    corpus average). No SQL function counts unicode61 tokens (a PCRE count took 94 s for 1 MB), so the store
--    fills it: after an import, and before a search for messages written since. NULL until then.
-- 2. '_' becomes a space in the indexed text: InnoDB counts '_' as a letter ("web_search" is one word) where
--    unicode61 splits there, so FULLTEXT could not find "search" in it. A BEFORE INSERT trigger on
--    message_search does it for every row migration 0001's triggers write; the UPDATE does it for rows already
--    there (the text is derived from messages: nothing of a message is rewritten).
-- Every statement can run again after an interruption (the migrator resumes at the first one not recorded).
ALTER TABLE `message_search` ADD COLUMN `token_count` int;
--> statement-breakpoint
CREATE INDEX `idx_message_search_token_count` ON `message_search` (`token_count`);
--> statement-breakpoint
CREATE TRIGGER `message_search_words` BEFORE INSERT ON `message_search` FOR EACH ROW
    SET NEW.`search_text` = REPLACE(NEW.`search_text`, '_', ' ');
--> statement-breakpoint
UPDATE `message_search` SET `search_text` = REPLACE(`search_text`, '_', ' ') WHERE LOCATE('_', `search_text`) > 0;
