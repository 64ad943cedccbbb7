-- Custom SQL migration: keep sessions.last_message_at and sessions.chain_last_active (added by 0004) right
-- for every writer, Hermes' own Python included, so listSessionsRich({ orderByLastActive }) reads an index.
--   last_message_at   = MAX(messages.timestamp) of the session, NULL without messages.
--   chain_last_active = Hermes' effective_last_active (list_sessions_rich, order_by_last_active): the newest of
--                       COALESCE(MAX(message timestamp), started_at) over the session and its compression
--                       continuations (parent ended with 'compression', child started at or after that end),
--                       at most 100 hops down, as COMPRESSION_TIP_HOPS bounds our walk.
-- A change to one session's activity reaches the sessions whose chain holds it: its compression ancestors
-- within 100 hops (the "up" walk). An append only raises values (one row per ancestor, usually one); anything
-- that can lower a value or change who is in a chain (deletes, timestamp or session moves, parent/end/start
-- changes, new or deleted sessions) recomputes those ancestors with Hermes' own downward walk ("down"), which
-- reads messages directly, so the order of the statements below never matters for the result.
-- Columns are only added (0004): no table rebuild. SQLite >= 3.8.3 reads these triggers (recursive CTEs in
-- trigger subqueries; checked with Python's sqlite3 3.40).
-- An append raises the session's values and those of its compression ancestors (usually none)...
CREATE TRIGGER IF NOT EXISTS session_activity_message_insert AFTER INSERT ON messages BEGIN
    UPDATE sessions SET last_message_at = MAX(COALESCE(last_message_at, new.timestamp), new.timestamp),
                        chain_last_active = MAX(chain_last_active, new.timestamp)
    WHERE id = new.session_id AND (last_message_at IS NOT NULL OR new.timestamp >= started_at);
    UPDATE sessions SET chain_last_active = new.timestamp
    WHERE id IN (WITH RECURSIVE up(id, depth) AS (
        SELECT new.session_id, 0
        UNION ALL
        SELECT p.id, up.depth + 1 FROM up
        JOIN sessions c ON c.id = up.id
        JOIN sessions p ON p.id = c.parent_session_id
        WHERE p.end_reason = 'compression' AND c.started_at >= p.ended_at AND up.depth < 100
    ) SELECT id FROM up) AND id <> new.session_id AND chain_last_active < new.timestamp;
END;
--> statement-breakpoint
-- ...except a session's first message when it is older than the session's start: that lowers them. Whichever
-- of the two triggers runs first, the result is the same.
CREATE TRIGGER IF NOT EXISTS session_activity_message_insert_early AFTER INSERT ON messages
WHEN (SELECT last_message_at IS NULL AND new.timestamp < started_at FROM sessions WHERE id = new.session_id)
BEGIN
    UPDATE sessions SET last_message_at = new.timestamp WHERE id = new.session_id;
    UPDATE sessions SET chain_last_active = (
        WITH RECURSIVE down(id, depth) AS (
            SELECT sessions.id, 0
            UNION ALL
            SELECT c.id, down.depth + 1 FROM down
            JOIN sessions p ON p.id = down.id
            JOIN sessions c ON c.parent_session_id = down.id
            WHERE p.end_reason = 'compression' AND c.started_at >= p.ended_at AND down.depth < 100
        )
        SELECT MAX(COALESCE(
            (SELECT MAX(m.timestamp) FROM messages m WHERE m.session_id = down.id),
            (SELECT x.started_at FROM sessions x WHERE x.id = down.id)))
        FROM down)
    WHERE id IN (WITH RECURSIVE up(id, depth) AS (
        SELECT new.session_id, 0
        UNION ALL
        SELECT p.id, up.depth + 1 FROM up
        JOIN sessions c ON c.id = up.id
        JOIN sessions p ON p.id = c.parent_session_id
        WHERE p.end_reason = 'compression' AND c.started_at >= p.ended_at AND up.depth < 100
    ) SELECT id FROM up);
END;
--> statement-breakpoint
-- Only a delete of the newest message changes anything (a session's delete removes it last, in id order).
CREATE TRIGGER IF NOT EXISTS session_activity_message_delete AFTER DELETE ON messages
WHEN COALESCE(old.timestamp >= (SELECT last_message_at FROM sessions WHERE id = old.session_id), 1)
BEGIN
    UPDATE sessions SET chain_last_active = (
        WITH RECURSIVE down(id, depth) AS (
            SELECT sessions.id, 0
            UNION ALL
            SELECT c.id, down.depth + 1 FROM down
            JOIN sessions p ON p.id = down.id
            JOIN sessions c ON c.parent_session_id = down.id
            WHERE p.end_reason = 'compression' AND c.started_at >= p.ended_at AND down.depth < 100
        )
        SELECT MAX(COALESCE(
            (SELECT MAX(m.timestamp) FROM messages m WHERE m.session_id = down.id),
            (SELECT x.started_at FROM sessions x WHERE x.id = down.id)))
        FROM down)
    WHERE id IN (WITH RECURSIVE up(id, depth) AS (
        SELECT old.session_id, 0
        UNION ALL
        SELECT p.id, up.depth + 1 FROM up
        JOIN sessions c ON c.id = up.id
        JOIN sessions p ON p.id = c.parent_session_id
        WHERE p.end_reason = 'compression' AND c.started_at >= p.ended_at AND up.depth < 100
    ) SELECT id FROM up);
    UPDATE sessions SET last_message_at = (SELECT MAX(m.timestamp) FROM messages m WHERE m.session_id = old.session_id)
    WHERE id = old.session_id;
END;
--> statement-breakpoint
CREATE TRIGGER IF NOT EXISTS session_activity_message_move AFTER UPDATE OF timestamp, session_id ON messages
WHEN old.timestamp IS NOT new.timestamp OR old.session_id IS NOT new.session_id
BEGIN
    UPDATE sessions SET last_message_at = (SELECT MAX(m.timestamp) FROM messages m WHERE m.session_id = sessions.id)
    WHERE id IN (old.session_id, new.session_id);
    UPDATE sessions SET chain_last_active = (
        WITH RECURSIVE down(id, depth) AS (
            SELECT sessions.id, 0
            UNION ALL
            SELECT c.id, down.depth + 1 FROM down
            JOIN sessions p ON p.id = down.id
            JOIN sessions c ON c.parent_session_id = down.id
            WHERE p.end_reason = 'compression' AND c.started_at >= p.ended_at AND down.depth < 100
        )
        SELECT MAX(COALESCE(
            (SELECT MAX(m.timestamp) FROM messages m WHERE m.session_id = down.id),
            (SELECT x.started_at FROM sessions x WHERE x.id = down.id)))
        FROM down)
    WHERE id IN (WITH RECURSIVE up(id, depth) AS (
        SELECT old.session_id, 0
        UNION ALL SELECT new.session_id, 0
        UNION ALL
        SELECT p.id, up.depth + 1 FROM up
        JOIN sessions c ON c.id = up.id
        JOIN sessions p ON p.id = c.parent_session_id
        WHERE p.end_reason = 'compression' AND c.started_at >= p.ended_at AND up.depth < 100
    ) SELECT id FROM up);
END;
--> statement-breakpoint
-- Whatever the inserter wrote into the derived columns (a copy of another store's row) is replaced by the truth.
CREATE TRIGGER IF NOT EXISTS session_activity_session_insert AFTER INSERT ON sessions BEGIN
    UPDATE sessions SET last_message_at = (SELECT MAX(m.timestamp) FROM messages m WHERE m.session_id = new.id)
    WHERE id = new.id;
    UPDATE sessions SET chain_last_active = (
        WITH RECURSIVE down(id, depth) AS (
            SELECT sessions.id, 0
            UNION ALL
            SELECT c.id, down.depth + 1 FROM down
            JOIN sessions p ON p.id = down.id
            JOIN sessions c ON c.parent_session_id = down.id
            WHERE p.end_reason = 'compression' AND c.started_at >= p.ended_at AND down.depth < 100
        )
        SELECT MAX(COALESCE(
            (SELECT MAX(m.timestamp) FROM messages m WHERE m.session_id = down.id),
            (SELECT x.started_at FROM sessions x WHERE x.id = down.id)))
        FROM down)
    WHERE id IN (WITH RECURSIVE up(id, depth) AS (
        SELECT new.id, 0
        UNION ALL
        SELECT p.id, up.depth + 1 FROM up
        JOIN sessions c ON c.id = up.id
        JOIN sessions p ON p.id = c.parent_session_id
        WHERE p.end_reason = 'compression' AND c.started_at >= p.ended_at AND up.depth < 100
    ) SELECT id FROM up);
END;
--> statement-breakpoint
-- Chain membership: the old parent's ancestors lose this session's subtree, the new ones gain it.
CREATE TRIGGER IF NOT EXISTS session_activity_session_update
AFTER UPDATE OF parent_session_id, end_reason, ended_at, started_at ON sessions
WHEN old.parent_session_id IS NOT new.parent_session_id OR old.end_reason IS NOT new.end_reason
  OR old.ended_at IS NOT new.ended_at OR old.started_at IS NOT new.started_at
BEGIN
    UPDATE sessions SET chain_last_active = (
        WITH RECURSIVE down(id, depth) AS (
            SELECT sessions.id, 0
            UNION ALL
            SELECT c.id, down.depth + 1 FROM down
            JOIN sessions p ON p.id = down.id
            JOIN sessions c ON c.parent_session_id = down.id
            WHERE p.end_reason = 'compression' AND c.started_at >= p.ended_at AND down.depth < 100
        )
        SELECT MAX(COALESCE(
            (SELECT MAX(m.timestamp) FROM messages m WHERE m.session_id = down.id),
            (SELECT x.started_at FROM sessions x WHERE x.id = down.id)))
        FROM down)
    WHERE id IN (WITH RECURSIVE up(id, depth) AS (
        SELECT new.id, 0
        UNION ALL SELECT old.parent_session_id, 0
        UNION ALL
        SELECT p.id, up.depth + 1 FROM up
        JOIN sessions c ON c.id = up.id
        JOIN sessions p ON p.id = c.parent_session_id
        WHERE p.end_reason = 'compression' AND c.started_at >= p.ended_at AND up.depth < 100
    ) SELECT id FROM up);
END;
--> statement-breakpoint
CREATE TRIGGER IF NOT EXISTS session_activity_session_delete AFTER DELETE ON sessions
WHEN old.parent_session_id IS NOT NULL
BEGIN
    UPDATE sessions SET chain_last_active = (
        WITH RECURSIVE down(id, depth) AS (
            SELECT sessions.id, 0
            UNION ALL
            SELECT c.id, down.depth + 1 FROM down
            JOIN sessions p ON p.id = down.id
            JOIN sessions c ON c.parent_session_id = down.id
            WHERE p.end_reason = 'compression' AND c.started_at >= p.ended_at AND down.depth < 100
        )
        SELECT MAX(COALESCE(
            (SELECT MAX(m.timestamp) FROM messages m WHERE m.session_id = down.id),
            (SELECT x.started_at FROM sessions x WHERE x.id = down.id)))
        FROM down)
    WHERE id IN (WITH RECURSIVE up(id, depth) AS (
        SELECT old.parent_session_id, 0
        UNION ALL
        SELECT p.id, up.depth + 1 FROM up
        JOIN sessions c ON c.id = up.id
        JOIN sessions p ON p.id = c.parent_session_id
        WHERE p.end_reason = 'compression' AND c.started_at >= p.ended_at AND up.depth < 100
    ) SELECT id FROM up);
END;
--> statement-breakpoint
-- Backfill: every existing row, the same definitions.
UPDATE sessions SET last_message_at = (SELECT MAX(m.timestamp) FROM messages m WHERE m.session_id = sessions.id);
--> statement-breakpoint
UPDATE sessions SET chain_last_active = (
        WITH RECURSIVE down(id, depth) AS (
            SELECT sessions.id, 0
            UNION ALL
            SELECT c.id, down.depth + 1 FROM down
            JOIN sessions p ON p.id = down.id
            JOIN sessions c ON c.parent_session_id = down.id
            WHERE p.end_reason = 'compression' AND c.started_at >= p.ended_at AND down.depth < 100
        )
        SELECT MAX(COALESCE(
            (SELECT MAX(m.timestamp) FROM messages m WHERE m.session_id = down.id),
            (SELECT x.started_at FROM sessions x WHERE x.id = down.id)))
        FROM down);
