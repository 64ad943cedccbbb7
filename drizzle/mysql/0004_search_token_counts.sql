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
-- 3. char_count: the text's length in characters. FTS5's trigram table holds one token per character but the
--    last two, so the sum of (char_count - 2) is the trigram corpus' length (bm25 for substring searches).
-- 4. ascii_only: whether the indexed text is all ASCII. There FULLTEXT's word for an ASCII query word is
--    unicode61's (no accents, ligatures, full-width letters or ß for the collation to equate), so bm25's
--    per-phrase document counts need no judging of those rows.
-- Every statement can run again after an interruption (the migrator resumes at the first one not recorded).
-- One ALTER (atomic on MariaDB 10.6+: all of it or none). It rebuilds the table and with it the FULLTEXT index,
-- which takes the session's stopword setting at that moment: off, as 0001 created it.
/*M!100301 SET STATEMENT innodb_ft_enable_stopword = OFF FOR */ ALTER TABLE `message_search`
    ADD COLUMN `token_count` int,
    ADD COLUMN `char_count` int NOT NULL DEFAULT 0,
    ADD COLUMN `ascii_only` boolean NOT NULL DEFAULT false,
    ADD INDEX `idx_message_search_token_count` (`token_count`);
--> statement-breakpoint
CREATE TRIGGER `message_search_words` BEFORE INSERT ON `message_search` FOR EACH ROW
    SET NEW.`search_text` = REPLACE(NEW.`search_text`, '_', ' '),
        NEW.`char_count` = CHAR_LENGTH(NEW.`search_text`),
        NEW.`ascii_only` = (NEW.`char_count` = OCTET_LENGTH(NEW.`search_text`));
--> statement-breakpoint
UPDATE `message_search` SET `search_text` = REPLACE(`search_text`, '_', ' '),
    `char_count` = CHAR_LENGTH(`search_text`),
    `ascii_only` = (`char_count` = OCTET_LENGTH(`search_text`));
