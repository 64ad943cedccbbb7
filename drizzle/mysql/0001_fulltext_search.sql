-- Custom SQL migration: word search for MySQL/MariaDB (drizzle-kit models neither FULLTEXT nor triggers).
-- As Hermes' inline FTS5 table, message_search holds each message's searchable text,
--   content || ' ' || tool_name || ' ' || tool_calls   (each NULL as ''),
-- kept in step by three triggers on messages, with an InnoDB FULLTEXT index over it.
-- search_text is utf8mb4_unicode_ci: FULLTEXT matching follows the column's collation, and this one folds
-- case and accents as FTS5's unicode61 tokenizer does (remove_diacritics); a binary collation would make
-- every search case-sensitive.
-- The index is created without stopwords (MariaDB's SET STATEMENT; the setting is fixed into the index at
-- creation): InnoDB's default list would make "the", "about", "will" unsearchable, which FTS5 finds.
-- The migration runs on an empty messages table, so there is nothing to backfill.
CREATE TABLE `message_search` (
	`message_id` bigint NOT NULL,
	`search_text` longtext CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci NOT NULL,
	CONSTRAINT `message_search_message_id` PRIMARY KEY(`message_id`)
);
--> statement-breakpoint
/*M!100301 SET STATEMENT innodb_ft_enable_stopword = OFF FOR */ CREATE FULLTEXT INDEX `idx_message_search_words` ON `message_search` (`search_text`);
--> statement-breakpoint
CREATE TRIGGER `message_search_insert` AFTER INSERT ON `messages` FOR EACH ROW
    INSERT INTO `message_search` (`message_id`, `search_text`) VALUES (
        NEW.`id`,
        CONCAT(
            COALESCE(NEW.`content`, '') COLLATE utf8mb4_bin, ' ',
            COALESCE(CONVERT(NEW.`tool_name` USING utf8mb4) COLLATE utf8mb4_bin, ''), ' ',
            COALESCE(NEW.`tool_calls`, '') COLLATE utf8mb4_bin
        )
    );
--> statement-breakpoint
CREATE TRIGGER `message_search_update` AFTER UPDATE ON `messages` FOR EACH ROW
BEGIN
    DELETE FROM `message_search` WHERE `message_id` = OLD.`id`;
    INSERT INTO `message_search` (`message_id`, `search_text`) VALUES (
        NEW.`id`,
        CONCAT(
            COALESCE(NEW.`content`, '') COLLATE utf8mb4_bin, ' ',
            COALESCE(CONVERT(NEW.`tool_name` USING utf8mb4) COLLATE utf8mb4_bin, ''), ' ',
            COALESCE(NEW.`tool_calls`, '') COLLATE utf8mb4_bin
        )
    );
END;
--> statement-breakpoint
CREATE TRIGGER `message_search_delete` AFTER DELETE ON `messages` FOR EACH ROW
    DELETE FROM `message_search` WHERE `message_id` = OLD.`id`;
