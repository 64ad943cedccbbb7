-- Custom SQL migration: the search index every server engine keeps the same way (src/search/postings-index.ts),
-- as Postgres' 0010 keeps it. Two indexes, as Hermes keeps two FTS5 tables: kind 0 holds unicode61 words,
-- kind 1 trigrams. Each term's postings are cut into blocks of about 4 KB (src/search/postings-block.ts), one row
-- per block, keyed by term then first id. The library tokenizes, so words are cut as FTS5 cuts them (InnoDB's
-- FULLTEXT parser only narrowed a search that TypeScript then judged); the database stores and fetches bytes.
--
-- Writes never tokenize here. Row triggers queue each written message in message_search_recent with no postings;
-- the library tokenizes queued messages before a search and folds them into the blocks (src/db/mysql/search-blocks.ts).
-- Rows written around the library (an app's own INSERT) are indexed the same way. A message deleted or changed
-- after it was merged leaves its old text in message_search_removed until its postings leave the blocks.
-- TRUNCATE fires no trigger on MySQL: a store never truncates messages (it deletes); an app that truncates
-- messages must truncate these four tables too and reset message_search_merged to zeros.
--
-- term holds termKey(term) (src/search/term-key.ts): the UTF-8 bytes of a term up to 1,024 bytes, else its first
-- 1,024 bytes and its SHA-256, the whole term in full_term (an InnoDB key holds at most 3,072 bytes). Bytes compare
-- bytewise, so a prefix `deploy*` is a key range and no collation folds or pads them. MySQL has no row xmin:
-- `version` is a new UUID_SHORT() at every insert or rewrite, what the per-process decode caches are keyed by.
-- Every statement can run again after an interruption (the migrator resumes at the first one not recorded).
CREATE TABLE `message_search_blocks` (
    `kind` tinyint NOT NULL,
    `term` varbinary(1100) NOT NULL,
    `full_term` longblob,
    `first_id` bigint NOT NULL,
    `last_id` bigint NOT NULL,
    `count` int NOT NULL,
    `bound` blob NOT NULL,
    `data` longblob NOT NULL,
    `version` bigint unsigned NOT NULL,
    CONSTRAINT `message_search_blocks_key` PRIMARY KEY (`kind`, `term`, `first_id`)
);
--> statement-breakpoint
-- One row per message not merged yet: its postings per index (src/search/postings.ts' encodeIndexed), NULL while
-- it waits to be tokenized (queued). No foreign key: the triggers below keep it in step with messages.
CREATE TABLE `message_search_recent` (
    `message_id` bigint NOT NULL,
    `queued` boolean NOT NULL DEFAULT true,
    `words` longblob,
    `trigrams` longblob,
    `version` bigint unsigned NOT NULL,
    CONSTRAINT `message_search_recent_message_id` PRIMARY KEY (`message_id`)
);
--> statement-breakpoint
-- The queued messages (what the library tokenizes next), found without reading the segment's postings.
CREATE INDEX `idx_message_search_recent_queued` ON `message_search_recent` (`queued`, `message_id`);
--> statement-breakpoint
-- The searchable columns of merged messages that were deleted or changed, until their postings leave the blocks.
CREATE TABLE `message_search_removed` (
    `seq` bigint NOT NULL AUTO_INCREMENT,
    `message_id` bigint NOT NULL,
    `content` longtext CHARACTER SET utf8mb4 COLLATE utf8mb4_bin,
    `tool_name` longblob,
    `tool_calls` longtext CHARACTER SET utf8mb4 COLLATE utf8mb4_bin,
    CONSTRAINT `message_search_removed_seq` PRIMARY KEY (`seq`)
);
--> statement-breakpoint
-- Messages and tokens in the blocks, per index: bm25's corpus totals with the recent segment's. The row of kind 0
-- is also the lock that makes merges, removals and builds run one at a time (SELECT … FOR UPDATE).
CREATE TABLE `message_search_merged` (
    `kind` tinyint NOT NULL,
    `messages` bigint NOT NULL,
    `tokens` bigint NOT NULL,
    CONSTRAINT `message_search_merged_kind` PRIMARY KEY (`kind`)
);
--> statement-breakpoint
INSERT INTO `message_search_merged` (`kind`, `messages`, `tokens`) VALUES (0, 0, 0), (1, 0, 0)
    ON DUPLICATE KEY UPDATE `kind` = `kind`;
--> statement-breakpoint
-- Row triggers (MySQL has no statement triggers) doing what Postgres' statement functions do.
CREATE TRIGGER `messages_search_queue_insert` AFTER INSERT ON `messages` FOR EACH ROW
    INSERT INTO `message_search_recent` (`message_id`, `version`) VALUES (NEW.`id`, UUID_SHORT())
    ON DUPLICATE KEY UPDATE `queued` = true, `words` = NULL, `trigrams` = NULL, `version` = UUID_SHORT();
--> statement-breakpoint
-- A message still in the recent segment just leaves it; a merged one leaves its text to take out of the blocks.
-- A merge locks the recent rows it folds (FOR UPDATE): the DELETE here waits for it, then finds them gone.
CREATE TRIGGER `messages_search_queue_delete` AFTER DELETE ON `messages` FOR EACH ROW
BEGIN
    DELETE FROM `message_search_recent` WHERE `message_id` = OLD.`id`;
    IF ROW_COUNT() = 0 THEN
        INSERT INTO `message_search_removed` (`message_id`, `content`, `tool_name`, `tool_calls`)
        VALUES (OLD.`id`, OLD.`content`, OLD.`tool_name`, OLD.`tool_calls`);
    END IF;
END;
--> statement-breakpoint
-- A change of searchable text is a removal of the old text and a new message under the same id.
CREATE TRIGGER `messages_search_queue_update` AFTER UPDATE ON `messages` FOR EACH ROW
BEGIN
    IF NOT (OLD.`id` = NEW.`id` AND OLD.`content` <=> NEW.`content` AND OLD.`tool_name` <=> NEW.`tool_name`
            AND OLD.`tool_calls` <=> NEW.`tool_calls`) THEN
        DELETE FROM `message_search_recent` WHERE `message_id` = OLD.`id`;
        IF ROW_COUNT() = 0 THEN
            INSERT INTO `message_search_removed` (`message_id`, `content`, `tool_name`, `tool_calls`)
            VALUES (OLD.`id`, OLD.`content`, OLD.`tool_name`, OLD.`tool_calls`);
        END IF;
        INSERT INTO `message_search_recent` (`message_id`, `version`) VALUES (NEW.`id`, UUID_SHORT())
        ON DUPLICATE KEY UPDATE `queued` = true, `words` = NULL, `trigrams` = NULL, `version` = UUID_SHORT();
    END IF;
END;
--> statement-breakpoint
-- Every existing message waits to be tokenized: the library builds the blocks from them in one pass on the store's
-- first search, or an import's end. After the triggers: CREATE TRIGGER waits for writes in flight, and
-- a message written since is queued by them (the backfill leaves its row as it is).
INSERT INTO `message_search_recent` (`message_id`, `version`) SELECT `id`, UUID_SHORT() FROM `messages`
    ON DUPLICATE KEY UPDATE `message_id` = `message_search_recent`.`message_id`;
