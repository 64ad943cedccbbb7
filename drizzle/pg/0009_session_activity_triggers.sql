-- Custom SQL migration: keep sessions.last_message_at and sessions.chain_last_active (added by 0008) right for
-- every writer, so listSessionsRich({ orderByLastActive }) reads an index instead of walking every chain.
--   last_message_at   = MAX(messages.timestamp) of the session, NULL without messages.
--   chain_last_active = Hermes' effective_last_active (list_sessions_rich, order_by_last_active): the newest of
--                       COALESCE(MAX(message timestamp), started_at) over the session and its compression
--                       continuations (parent ended with 'compression', child started at or after that end),
--                       at most 100 hops down, as COMPRESSION_TIP_HOPS bounds our walk.
-- A change to one session's activity reaches the sessions whose chain holds it: its compression ancestors
-- within 100 hops (session_activity_up). Appends only raise values; whatever can lower one or change who is in
-- a chain recomputes those ancestors with Hermes' own downward walk (session_activity_chain), which reads
-- messages directly. The SQLite migration (0005) keeps the same values with the same rules.
-- Message triggers are statement-level (one pass per bulk insert or delete), as the search triggers are.
-- Every function is pinned to the migrator's search_path (see 0007): names are unqualified.
CREATE FUNCTION session_activity_up(seeds text[]) RETURNS TABLE (id text)
LANGUAGE sql STABLE SET search_path FROM CURRENT AS $$
    WITH RECURSIVE up(id, depth) AS (
        SELECT seed, 0 FROM unnest(seeds) AS seed WHERE seed IS NOT NULL
        UNION ALL
        SELECT p.id, up.depth + 1 FROM up
        JOIN sessions c ON c.id = up.id
        JOIN sessions p ON p.id = c.parent_session_id
        WHERE p.end_reason = 'compression' AND c.started_at >= p.ended_at AND up.depth < 100
    )
    SELECT DISTINCT up.id FROM up
$$;
--> statement-breakpoint
CREATE FUNCTION session_activity_chain(root text) RETURNS timestamptz
LANGUAGE sql STABLE SET search_path FROM CURRENT AS $$
    WITH RECURSIVE down(id, depth) AS (
        SELECT root, 0
        UNION ALL
        SELECT c.id, down.depth + 1 FROM down
        JOIN sessions p ON p.id = down.id
        JOIN sessions c ON c.parent_session_id = down.id
        WHERE p.end_reason = 'compression' AND c.started_at >= p.ended_at AND down.depth < 100
    )
    SELECT MAX(COALESCE(
        (SELECT MAX(m.timestamp) FROM messages m WHERE m.session_id = down.id),
        (SELECT x.started_at FROM sessions x WHERE x.id = down.id)))
    FROM down
$$;
--> statement-breakpoint
-- Loops of single-row statements by primary key: a set-based UPDATE … WHERE id IN (function) let the planner
-- scan every session and evaluate the chain walk per row (minutes for 2,000 inserts).
CREATE FUNCTION session_activity_recompute(seeds text[]) RETURNS void
LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
DECLARE
    target text;
    value timestamptz;
BEGIN
    FOR target IN SELECT u.id FROM session_activity_up(seeds) u LOOP
        value := session_activity_chain(target);
        UPDATE sessions SET chain_last_active = value WHERE id = target AND chain_last_active IS DISTINCT FROM value;
    END LOOP;
END $$;
--> statement-breakpoint
CREATE FUNCTION session_activity_messages_added() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
DECLARE
    added record;
    ancestor text;
    previous timestamptz;
    started timestamptz;
    parent text;
BEGIN
    FOR added IN SELECT session_id, MAX(timestamp) AS newest FROM new_rows GROUP BY session_id LOOP
        SELECT last_message_at, started_at, parent_session_id INTO previous, started, parent
        FROM sessions WHERE id = added.session_id;
        CONTINUE WHEN NOT FOUND;
        IF previous IS NULL AND added.newest < started THEN
            -- The one insert that lowers a value: a session's first messages, all older than its start.
            UPDATE sessions SET last_message_at = added.newest WHERE id = added.session_id;
            PERFORM session_activity_recompute(ARRAY[added.session_id]);
            CONTINUE;
        END IF;
        -- GREATEST: a concurrent append may have raised them since the SELECT above.
        UPDATE sessions SET last_message_at = GREATEST(last_message_at, added.newest),
                            chain_last_active = GREATEST(chain_last_active, added.newest)
        WHERE id = added.session_id;
        CONTINUE WHEN parent IS NULL;
        FOR ancestor IN SELECT u.id FROM session_activity_up(ARRAY[added.session_id]) u LOOP
            UPDATE sessions SET chain_last_active = added.newest
            WHERE id = ancestor AND id <> added.session_id AND chain_last_active < added.newest;
        END LOOP;
    END LOOP;
    RETURN NULL;
END $$;
--> statement-breakpoint
CREATE FUNCTION session_activity_messages_removed() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
DECLARE
    affected text[];
BEGIN
    -- Only sessions that lost their newest message change.
    SELECT array_agg(DISTINCT o.session_id) INTO affected
    FROM old_rows o JOIN sessions s ON s.id = o.session_id
    WHERE s.last_message_at IS NULL OR o.timestamp >= s.last_message_at;
    IF affected IS NULL THEN
        RETURN NULL;
    END IF;
    UPDATE sessions s SET last_message_at = (SELECT MAX(m.timestamp) FROM messages m WHERE m.session_id = s.id)
    WHERE s.id = ANY (affected);
    PERFORM session_activity_recompute(affected);
    RETURN NULL;
END $$;
--> statement-breakpoint
CREATE FUNCTION session_activity_messages_changed() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
DECLARE
    affected text[];
BEGIN
    SELECT array_agg(DISTINCT x.session_id) INTO affected FROM (
        SELECT o.session_id FROM old_rows o JOIN new_rows n ON n.id = o.id
        WHERE o.timestamp IS DISTINCT FROM n.timestamp OR o.session_id IS DISTINCT FROM n.session_id
        UNION
        SELECT n.session_id FROM old_rows o JOIN new_rows n ON n.id = o.id
        WHERE o.timestamp IS DISTINCT FROM n.timestamp OR o.session_id IS DISTINCT FROM n.session_id
    ) x;
    IF affected IS NULL THEN
        RETURN NULL;
    END IF;
    UPDATE sessions s SET last_message_at = (SELECT MAX(m.timestamp) FROM messages m WHERE m.session_id = s.id)
    WHERE s.id = ANY (affected);
    PERFORM session_activity_recompute(affected);
    RETURN NULL;
END $$;
--> statement-breakpoint
CREATE FUNCTION session_activity_messages_truncated() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
BEGIN
    UPDATE sessions SET last_message_at = NULL WHERE last_message_at IS NOT NULL;
    UPDATE sessions s SET chain_last_active = session_activity_chain(s.id);
    RETURN NULL;
END $$;
--> statement-breakpoint
-- A new row starts from its own messages (none, unless a writer without FKs put them first) and start time:
-- whatever the inserter wrote into the derived columns (a copy of another store's row) is replaced. A child may
-- extend its ancestors' chains: that part runs after the insert, when the row is visible to the walk.
CREATE FUNCTION session_activity_session_adding() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
BEGIN
    NEW.last_message_at := (SELECT MAX(m.timestamp) FROM messages m WHERE m.session_id = NEW.id);
    NEW.chain_last_active := COALESCE(NEW.last_message_at, NEW.started_at);
    RETURN NEW;
END $$;
--> statement-breakpoint
CREATE FUNCTION session_activity_session_added() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
BEGIN
    PERFORM session_activity_recompute(ARRAY[NEW.id]);
    RETURN NULL;
END $$;
--> statement-breakpoint
-- Chain membership: the old parent's ancestors lose this session's subtree, the new ones gain it.
CREATE FUNCTION session_activity_session_moved() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
BEGIN
    PERFORM session_activity_recompute(ARRAY[NEW.id, OLD.parent_session_id]);
    RETURN NULL;
END $$;
--> statement-breakpoint
CREATE FUNCTION session_activity_session_removed() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
BEGIN
    PERFORM session_activity_recompute(ARRAY[OLD.parent_session_id]);
    RETURN NULL;
END $$;
--> statement-breakpoint
CREATE TRIGGER session_activity_messages_insert AFTER INSERT ON messages
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION session_activity_messages_added();
--> statement-breakpoint
CREATE TRIGGER session_activity_messages_delete AFTER DELETE ON messages
    REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION session_activity_messages_removed();
--> statement-breakpoint
CREATE TRIGGER session_activity_messages_update AFTER UPDATE ON messages
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION session_activity_messages_changed();
--> statement-breakpoint
CREATE TRIGGER session_activity_messages_truncate AFTER TRUNCATE ON messages
    FOR EACH STATEMENT EXECUTE FUNCTION session_activity_messages_truncated();
--> statement-breakpoint
CREATE TRIGGER session_activity_session_insert BEFORE INSERT ON sessions
    FOR EACH ROW EXECUTE FUNCTION session_activity_session_adding();
--> statement-breakpoint
-- A root's chain is itself until a child comes (children cannot come first: the foreign key, and replica mode
-- that would skip it skips triggers too).
CREATE TRIGGER session_activity_session_insert_child AFTER INSERT ON sessions
    FOR EACH ROW WHEN (NEW.parent_session_id IS NOT NULL) EXECUTE FUNCTION session_activity_session_added();
--> statement-breakpoint
CREATE TRIGGER session_activity_session_update AFTER UPDATE OF parent_session_id, end_reason, ended_at, started_at ON sessions
    FOR EACH ROW WHEN (OLD.parent_session_id IS DISTINCT FROM NEW.parent_session_id
        OR OLD.end_reason IS DISTINCT FROM NEW.end_reason
        OR OLD.ended_at IS DISTINCT FROM NEW.ended_at
        OR OLD.started_at IS DISTINCT FROM NEW.started_at)
    EXECUTE FUNCTION session_activity_session_moved();
--> statement-breakpoint
CREATE TRIGGER session_activity_session_delete AFTER DELETE ON sessions
    FOR EACH ROW WHEN (OLD.parent_session_id IS NOT NULL) EXECUTE FUNCTION session_activity_session_removed();
--> statement-breakpoint
-- Backfill: every existing row, the same definitions.
UPDATE sessions s SET last_message_at = (SELECT MAX(m.timestamp) FROM messages m WHERE m.session_id = s.id);
--> statement-breakpoint
UPDATE sessions s SET chain_last_active = session_activity_chain(s.id);
