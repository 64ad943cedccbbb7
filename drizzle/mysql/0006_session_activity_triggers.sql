-- Custom SQL migration: keep session_activity (created by 0005) right for every writer, so that
-- listSessionsRich({ orderByLastActive }) reads idx_session_activity_order instead of walking every chain.
-- The values are SQLite's sessions.last_message_at and chain_last_active (drizzle/sqlite/0005, with the same
-- rules; Postgres: drizzle/pg/0009):
--   last_message_at   = MAX(messages.timestamp) of the session, NULL without messages.
--   chain_last_active = Hermes' effective_last_active (list_sessions_rich, order_by_last_active): the newest of
--                       COALESCE(MAX(message timestamp), started_at) over the session and its compression
--                       continuations (parent ended with 'compression', child started at or after that end),
--                       at most 100 hops down, as COMPRESSION_TIP_HOPS bounds our walk.
-- A change to one session's activity reaches the sessions whose chain holds it: its compression ancestors
-- within 100 hops (the "up" walk). An append only raises values; whatever can lower one or change who is in a
-- chain recomputes those ancestors with Hermes' own downward walk ("down"), which reads messages directly.
-- MySQL differs from SQLite in three ways that shape this file:
-- - A trigger cannot update the table that fired it (error 1442): hence the separate table, which triggers
--   on both sessions and messages may write.
-- - Triggers are row-level only, and TRUNCATE and foreign-key cascades fire none (messages has no cascade).
-- - An import holds the message insert trigger off by setting @hsdb_deferred_activity on its connection for
--   its insert statements only (db/mysql/dialect.ts), then builds the values for the imported range with
--   hsdb_session_activity_build, as SQLite's import drops and rebuilds its trigger inside one transaction.
-- Every statement can run again after an interruption (the migrator resumes at the first one not recorded,
-- and takes "already exists" from a CREATE as done).
CREATE PROCEDURE `hsdb_session_activity_recompute`(IN `p_first` varbinary(3048), IN `p_second` varbinary(3048))
MODIFIES SQL DATA
BEGIN
    DECLARE `v_done` boolean DEFAULT false;
    DECLARE `v_id` varbinary(3048);
    DECLARE `v_chain` datetime(6);
    DECLARE `ancestors` CURSOR FOR
        WITH RECURSIVE `up`(`id`, `depth`) AS (
            SELECT `p_first`, 0 FROM DUAL WHERE `p_first` IS NOT NULL
            UNION ALL
            SELECT `p_second`, 0 FROM DUAL WHERE `p_second` IS NOT NULL
            UNION ALL
            SELECT `p`.`id`, `up`.`depth` + 1 FROM `up`
            JOIN `sessions` `c` ON `c`.`id` = `up`.`id`
            JOIN `sessions` `p` ON `p`.`id` = `c`.`parent_session_id`
            WHERE `p`.`end_reason` = 'compression' AND `c`.`started_at` >= `p`.`ended_at` AND `up`.`depth` < 100
        )
        SELECT DISTINCT `id` FROM `up`;
    DECLARE CONTINUE HANDLER FOR NOT FOUND SET `v_done` = true;
    OPEN `ancestors`;
    walk: LOOP
        FETCH `ancestors` INTO `v_id`;
        IF `v_done` THEN
            LEAVE walk;
        END IF;
        SET `v_chain` = (
            WITH RECURSIVE `down`(`id`, `depth`) AS (
                SELECT `v_id`, 0
                UNION ALL
                SELECT `c`.`id`, `down`.`depth` + 1 FROM `down`
                JOIN `sessions` `p` ON `p`.`id` = `down`.`id`
                JOIN `sessions` `c` ON `c`.`parent_session_id` = `down`.`id`
                WHERE `p`.`end_reason` = 'compression' AND `c`.`started_at` >= `p`.`ended_at` AND `down`.`depth` < 100
            )
            SELECT MAX(COALESCE(
                (SELECT MAX(`m`.`timestamp`) FROM `messages` `m` WHERE `m`.`session_id` = `down`.`id`),
                (SELECT `x`.`started_at` FROM `sessions` `x` WHERE `x`.`id` = `down`.`id`)))
            FROM `down`);
        IF `v_chain` IS NOT NULL THEN
            UPDATE `session_activity` SET `chain_last_active` = `v_chain` WHERE `session_id` = `v_id`;
        END IF;
    END LOOP;
    CLOSE `ancestors`;
END;
--> statement-breakpoint
-- An append raises its session's compression ancestors (not the session itself) to `p_at`.
CREATE PROCEDURE `hsdb_session_activity_raise`(IN `p_id` varbinary(3048), IN `p_at` datetime(6))
MODIFIES SQL DATA
BEGIN
    DECLARE `v_done` boolean DEFAULT false;
    DECLARE `v_id` varbinary(3048);
    DECLARE `ancestors` CURSOR FOR
        WITH RECURSIVE `up`(`id`, `depth`) AS (
            SELECT `p_id`, 0
            UNION ALL
            SELECT `p`.`id`, `up`.`depth` + 1 FROM `up`
            JOIN `sessions` `c` ON `c`.`id` = `up`.`id`
            JOIN `sessions` `p` ON `p`.`id` = `c`.`parent_session_id`
            WHERE `p`.`end_reason` = 'compression' AND `c`.`started_at` >= `p`.`ended_at` AND `up`.`depth` < 100
        )
        SELECT DISTINCT `id` FROM `up` WHERE `id` <> `p_id`;
    DECLARE CONTINUE HANDLER FOR NOT FOUND SET `v_done` = true;
    OPEN `ancestors`;
    walk: LOOP
        FETCH `ancestors` INTO `v_id`;
        IF `v_done` THEN
            LEAVE walk;
        END IF;
        UPDATE `session_activity` SET `chain_last_active` = `p_at` WHERE `session_id` = `v_id` AND `chain_last_active` < `p_at`;
    END LOOP;
    CLOSE `ancestors`;
END;
--> statement-breakpoint
-- The import's deferred build for the messages with `p_after` < id <= `p_last`: each of their sessions' values
-- recomputed from the definitions (not raised), so a second build changes nothing.
CREATE PROCEDURE `hsdb_session_activity_build`(IN `p_after` bigint, IN `p_last` bigint)
MODIFIES SQL DATA
BEGIN
    DECLARE `v_done` boolean DEFAULT false;
    DECLARE `v_id` varbinary(3048);
    DECLARE `touched` CURSOR FOR
        SELECT DISTINCT `session_id` FROM `messages` WHERE `id` > `p_after` AND `id` <= `p_last`;
    DECLARE CONTINUE HANDLER FOR NOT FOUND SET `v_done` = true;
    OPEN `touched`;
    walk: LOOP
        FETCH `touched` INTO `v_id`;
        IF `v_done` THEN
            LEAVE walk;
        END IF;
        UPDATE `session_activity`
        SET `last_message_at` = (SELECT MAX(`m`.`timestamp`) FROM `messages` `m` WHERE `m`.`session_id` = `v_id`)
        WHERE `session_id` = `v_id`;
        CALL `hsdb_session_activity_recompute`(`v_id`, NULL);
    END LOOP;
    CLOSE `touched`;
END;
--> statement-breakpoint
-- An append raises the session's values and those of its compression ancestors (usually none), except a
-- session's first message when it is older than the session's start: that lowers them. ROW_COUNT() counts
-- matched rows or changed rows, as the client asked (CLIENT_FOUND_ROWS); either is right here, because an
-- append that changes nothing in its session changes nothing above it either (an ancestor's chain value is at
-- least the session's).
CREATE TRIGGER `session_activity_message_insert` AFTER INSERT ON `messages` FOR EACH ROW
main: BEGIN
    IF @hsdb_deferred_activity IS NOT NULL THEN
        LEAVE main;
    END IF;
    UPDATE `session_activity`
    SET `last_message_at` = GREATEST(COALESCE(`last_message_at`, NEW.`timestamp`), NEW.`timestamp`),
        `chain_last_active` = GREATEST(`chain_last_active`, NEW.`timestamp`)
    WHERE `session_id` = NEW.`session_id` AND (`last_message_at` IS NOT NULL OR NEW.`timestamp` >= `started_at`);
    IF ROW_COUNT() > 0 THEN
        -- The up walk's first step, checked here: most sessions continue no compressed one (no cursor opened).
        IF EXISTS (SELECT 1 FROM `sessions` `c` JOIN `sessions` `p` ON `p`.`id` = `c`.`parent_session_id`
                   WHERE `c`.`id` = NEW.`session_id` AND `p`.`end_reason` = 'compression'
                     AND `c`.`started_at` >= `p`.`ended_at`) THEN
            CALL `hsdb_session_activity_raise`(NEW.`session_id`, NEW.`timestamp`);
        END IF;
    ELSEIF EXISTS (SELECT 1 FROM `session_activity` WHERE `session_id` = NEW.`session_id`
                   AND `last_message_at` IS NULL AND NEW.`timestamp` < `started_at`) THEN
        UPDATE `session_activity` SET `last_message_at` = NEW.`timestamp` WHERE `session_id` = NEW.`session_id`;
        CALL `hsdb_session_activity_recompute`(NEW.`session_id`, NULL);
    END IF;
END;
--> statement-breakpoint
-- Only a delete of the newest message changes anything (a session's delete removes it last, in id order).
CREATE TRIGGER `session_activity_message_delete` AFTER DELETE ON `messages` FOR EACH ROW
BEGIN
    IF COALESCE(OLD.`timestamp` >= (SELECT `last_message_at` FROM `session_activity`
                                    WHERE `session_id` = OLD.`session_id`), true) THEN
        UPDATE `session_activity`
        SET `last_message_at` = (SELECT MAX(`m`.`timestamp`) FROM `messages` `m` WHERE `m`.`session_id` = OLD.`session_id`)
        WHERE `session_id` = OLD.`session_id`;
        CALL `hsdb_session_activity_recompute`(OLD.`session_id`, NULL);
    END IF;
END;
--> statement-breakpoint
CREATE TRIGGER `session_activity_message_update` AFTER UPDATE ON `messages` FOR EACH ROW
BEGIN
    IF NOT (OLD.`timestamp` <=> NEW.`timestamp`) OR NOT (OLD.`session_id` <=> NEW.`session_id`) THEN
        UPDATE `session_activity`
        SET `last_message_at` = (SELECT MAX(`m`.`timestamp`) FROM `messages` `m`
                                 WHERE `m`.`session_id` = `session_activity`.`session_id`)
        WHERE `session_id` IN (OLD.`session_id`, NEW.`session_id`);
        CALL `hsdb_session_activity_recompute`(OLD.`session_id`, NEW.`session_id`);
    END IF;
END;
--> statement-breakpoint
-- A new session's row; whatever messages it has (none, unless a writer turned foreign key checks off) count.
-- A compression continuation may extend its ancestors' chains; no session has children yet (the foreign key).
CREATE TRIGGER `session_activity_session_insert` AFTER INSERT ON `sessions` FOR EACH ROW
BEGIN
    DECLARE `v_last` datetime(6) DEFAULT (SELECT MAX(`m`.`timestamp`) FROM `messages` `m` WHERE `m`.`session_id` = NEW.`id`);
    INSERT INTO `session_activity` (`session_id`, `started_at`, `last_message_at`, `chain_last_active`)
    VALUES (NEW.`id`, NEW.`started_at`, `v_last`, COALESCE(`v_last`, NEW.`started_at`))
    ON DUPLICATE KEY UPDATE `started_at` = VALUES(`started_at`), `last_message_at` = VALUES(`last_message_at`),
                            `chain_last_active` = VALUES(`chain_last_active`);
    IF EXISTS (SELECT 1 FROM `sessions` `p` WHERE `p`.`id` = NEW.`parent_session_id`
               AND `p`.`end_reason` = 'compression' AND NEW.`started_at` >= `p`.`ended_at`) THEN
        CALL `hsdb_session_activity_recompute`(NEW.`id`, NULL);
    END IF;
END;
--> statement-breakpoint
-- Chain membership: the old parent's ancestors lose this session's subtree, the new ones gain it.
CREATE TRIGGER `session_activity_session_update` AFTER UPDATE ON `sessions` FOR EACH ROW
BEGIN
    IF NOT (OLD.`id` <=> NEW.`id`) THEN
        UPDATE `session_activity` SET `session_id` = NEW.`id` WHERE `session_id` = OLD.`id`;
    END IF;
    IF NOT (OLD.`started_at` <=> NEW.`started_at`) THEN
        UPDATE `session_activity` SET `started_at` = NEW.`started_at` WHERE `session_id` = NEW.`id`;
    END IF;
    IF NOT (OLD.`parent_session_id` <=> NEW.`parent_session_id`) OR NOT (OLD.`end_reason` <=> NEW.`end_reason`)
        OR NOT (OLD.`ended_at` <=> NEW.`ended_at`) OR NOT (OLD.`started_at` <=> NEW.`started_at`) THEN
        CALL `hsdb_session_activity_recompute`(NEW.`id`, OLD.`parent_session_id`);
    END IF;
END;
--> statement-breakpoint
CREATE TRIGGER `session_activity_session_delete` AFTER DELETE ON `sessions` FOR EACH ROW
BEGIN
    DELETE FROM `session_activity` WHERE `session_id` = OLD.`id`;
    IF OLD.`parent_session_id` IS NOT NULL THEN
        CALL `hsdb_session_activity_recompute`(OLD.`parent_session_id`, NULL);
    END IF;
END;
--> statement-breakpoint
-- Backfill: a row for every session, then the definitions (the rows of sessions written before this
-- migration; a session added meanwhile has its row from the trigger already).
INSERT INTO `session_activity` (`session_id`, `started_at`, `last_message_at`, `chain_last_active`)
SELECT `s`.`id`, `s`.`started_at`, NULL, `s`.`started_at` FROM `sessions` `s`
ON DUPLICATE KEY UPDATE `started_at` = VALUES(`started_at`);
--> statement-breakpoint
UPDATE `session_activity` SET `last_message_at` = (
    SELECT MAX(`m`.`timestamp`) FROM `messages` `m` WHERE `m`.`session_id` = `session_activity`.`session_id`);
--> statement-breakpoint
UPDATE `session_activity` SET `chain_last_active` = COALESCE(`last_message_at`, `started_at`);
--> statement-breakpoint
-- Chains: only a compression continuation makes one longer than its session. Each continuation's ancestors
-- are recomputed.
CREATE PROCEDURE `hsdb_session_activity_chains`()
MODIFIES SQL DATA
BEGIN
    DECLARE `v_done` boolean DEFAULT false;
    DECLARE `v_id` varbinary(3048);
    DECLARE `continuations` CURSOR FOR
        SELECT `c`.`id` FROM `sessions` `c` JOIN `sessions` `p` ON `p`.`id` = `c`.`parent_session_id`
        WHERE `p`.`end_reason` = 'compression' AND `c`.`started_at` >= `p`.`ended_at`;
    DECLARE CONTINUE HANDLER FOR NOT FOUND SET `v_done` = true;
    OPEN `continuations`;
    walk: LOOP
        FETCH `continuations` INTO `v_id`;
        IF `v_done` THEN
            LEAVE walk;
        END IF;
        CALL `hsdb_session_activity_recompute`(`v_id`, NULL);
    END LOOP;
    CLOSE `continuations`;
END;
--> statement-breakpoint
CALL `hsdb_session_activity_chains`();
