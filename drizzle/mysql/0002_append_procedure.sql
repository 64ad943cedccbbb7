-- Custom SQL migration: appendMessage in one round trip (drizzle-kit models no stored procedures).
-- The store's hottest write bumps the session's counters and inserts the message in one transaction. Sent
-- statement by statement that is four round trips (START TRANSACTION, UPDATE, INSERT, COMMIT); as one CALL,
-- one. The body is sql/messages.ts' appendMessageOp, statement for statement: the UPDATE doubles as the
-- existence check (and locks the session row, so one session's appends commit in order), then the row.
-- Answers one row: the new message id, or NULL when the session does not exist (nothing written). Any error
-- rolls the whole call back and is raised again as it was. Parameters are typed as the columns they fill.
CREATE PROCEDURE `hsdb_append_message`(
    IN `p_session_id` varbinary(3048),
    IN `p_role` longblob,
    IN `p_tool_call_id` longblob,
    IN `p_tool_calls` longtext CHARACTER SET utf8mb4 COLLATE utf8mb4_bin,
    IN `p_tool_name` longblob,
    IN `p_timestamp` datetime(6),
    IN `p_token_count` int,
    IN `p_finish_reason` longblob,
    IN `p_reasoning` longtext CHARACTER SET utf8mb4 COLLATE utf8mb4_bin,
    IN `p_reasoning_content` longtext CHARACTER SET utf8mb4 COLLATE utf8mb4_bin,
    IN `p_reasoning_details` longtext CHARACTER SET utf8mb4 COLLATE utf8mb4_bin,
    IN `p_codex_reasoning_items` longtext CHARACTER SET utf8mb4 COLLATE utf8mb4_bin,
    IN `p_codex_message_items` longtext CHARACTER SET utf8mb4 COLLATE utf8mb4_bin,
    IN `p_content` longtext CHARACTER SET utf8mb4 COLLATE utf8mb4_bin,
    IN `p_tool_call_count` bigint
)
MODIFIES SQL DATA
BEGIN
    DECLARE `v_id` bigint DEFAULT NULL;
    DECLARE EXIT HANDLER FOR SQLEXCEPTION
    BEGIN
        ROLLBACK;
        RESIGNAL;
    END;
    START TRANSACTION;
    UPDATE `sessions` SET `message_count` = COALESCE(`message_count`, 0) + 1,
                          `tool_call_count` = COALESCE(`tool_call_count`, 0) + `p_tool_call_count`
    WHERE `id` = `p_session_id`;
    -- message_count always changes, so a found session always counts here.
    IF ROW_COUNT() > 0 THEN
        INSERT INTO `messages` (`session_id`, `role`, `tool_call_id`, `tool_calls`, `tool_name`, `timestamp`,
            `token_count`, `finish_reason`, `reasoning`, `reasoning_content`, `reasoning_details`,
            `codex_reasoning_items`, `codex_message_items`, `content`)
        VALUES (`p_session_id`, `p_role`, `p_tool_call_id`, `p_tool_calls`, `p_tool_name`, `p_timestamp`,
            `p_token_count`, `p_finish_reason`, `p_reasoning`, `p_reasoning_content`, `p_reasoning_details`,
            `p_codex_reasoning_items`, `p_codex_message_items`, `p_content`);
        SET `v_id` = LAST_INSERT_ID();
    END IF;
    COMMIT;
    SELECT `v_id` AS `id`;
END;
