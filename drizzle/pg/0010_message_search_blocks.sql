-- Custom SQL migration: the search index every server engine keeps the same way (src/search/postings-index.ts),
-- replacing message_search_terms (migration 0005). Two indexes, as Hermes keeps two FTS5 tables: kind 0 holds
-- unicode61 words, kind 1 trigrams. Each term's postings are cut into blocks of about 4 KB (ids, frequencies,
-- lengths, positions: src/search/postings-block.ts), one row per block, keyed by term then first id. The library
-- tokenizes, so every engine cuts words as FTS5 does; the database stores and fetches bytes.
--
-- Why: message_search_terms held one row per (word, message): 688 MB for 200,000 messages against 13 MB for
-- FTS5's word index, filled by plpgsql triggers that re-tokenized each message (most of an import's time).
-- Blocks hold the same postings (and the trigram index) in about 1.7x FTS5's size, measured in docs/search.md.
--
-- Writes never tokenize here. A trigger queues each written message in message_search_recent with no postings;
-- the library tokenizes the queued messages before a search and folds them into the blocks in the background
-- (src/db/pg/search-blocks.ts). So rows written around the library (an app's own INSERT) are indexed the same
-- way, and a search never misses a message committed before it began. A message deleted or changed after it was
-- merged leaves its old text in message_search_removed until the library takes its postings out of the blocks
-- (bm25's totals stay exact).
--
-- Terms are bytea (their UTF-8 bytes): byte order is code point order, so a prefix `deploy*` is the key range
-- ['deploy', 'deploz'), and no collation folds or pads them.
CREATE TABLE message_search_blocks (
    kind smallint NOT NULL,
    term bytea NOT NULL,
    first_id bigint NOT NULL,
    last_id bigint NOT NULL,
    count integer NOT NULL,
    bound bytea NOT NULL,
    data bytea NOT NULL,
    PRIMARY KEY (kind, term, first_id)
);
--> statement-breakpoint
-- One row per message not merged yet: its postings per index (src/search/postings.ts' encodeIndexed), NULL
-- while it waits to be tokenized. No foreign key: the triggers below keep it in step with messages.
CREATE TABLE message_search_recent (
    message_id bigint PRIMARY KEY,
    words bytea,
    trigrams bytea
);
--> statement-breakpoint
-- The queued messages (what the library tokenizes next), found without reading the segment's postings.
CREATE INDEX idx_message_search_recent_queued ON message_search_recent (message_id) WHERE words IS NULL;
--> statement-breakpoint
-- The searchable columns of merged messages that were deleted or changed, until their postings leave the blocks.
CREATE TABLE message_search_removed (
    seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    message_id bigint NOT NULL,
    content text,
    content_json jsonb,
    tool_name text,
    tool_calls jsonb
);
--> statement-breakpoint
-- Messages and tokens in the blocks, per index: bm25's corpus totals with the recent segment's.
CREATE TABLE message_search_merged (
    kind smallint PRIMARY KEY,
    messages bigint NOT NULL,
    tokens bigint NOT NULL
);
--> statement-breakpoint
INSERT INTO message_search_merged (kind, messages, tokens) VALUES (0, 0, 0), (1, 0, 0);
--> statement-breakpoint
-- Statement-level triggers: one INSERT … SELECT per statement, not per row.
CREATE FUNCTION message_search_queue_add() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
BEGIN
    INSERT INTO message_search_recent (message_id) SELECT id FROM new_rows
    ON CONFLICT (message_id) DO UPDATE SET words = NULL, trigrams = NULL;
    RETURN NULL;
END $$;
--> statement-breakpoint
-- A message still in the recent segment just leaves it; a merged one leaves its text to take out of the blocks.
-- The merge locks the recent rows it folds (FOR UPDATE): the DELETE here waits for it, then finds them gone.
CREATE FUNCTION message_search_queue_remove() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
BEGIN
    WITH gone AS (
        DELETE FROM message_search_recent r USING old_rows o WHERE r.message_id = o.id RETURNING r.message_id
    )
    INSERT INTO message_search_removed (message_id, content, content_json, tool_name, tool_calls)
    SELECT o.id, o.content, o.content_json, o.tool_name, o.tool_calls FROM old_rows o
    WHERE NOT EXISTS (SELECT 1 FROM gone WHERE gone.message_id = o.id);
    RETURN NULL;
END $$;
--> statement-breakpoint
-- A change of searchable text is a removal of the old text and a new message under the same id.
CREATE FUNCTION message_search_queue_change() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
BEGIN
    WITH changed AS (
        SELECT o.id, o.content, o.content_json, o.tool_name, o.tool_calls
        FROM old_rows o JOIN new_rows n ON n.id = o.id
        WHERE (o.content, o.content_json, o.tool_name, o.tool_calls)
              IS DISTINCT FROM (n.content, n.content_json, n.tool_name, n.tool_calls)
    ), gone AS (
        DELETE FROM message_search_recent r USING changed c WHERE r.message_id = c.id RETURNING r.message_id
    )
    INSERT INTO message_search_removed (message_id, content, content_json, tool_name, tool_calls)
    SELECT c.id, c.content, c.content_json, c.tool_name, c.tool_calls FROM changed c
    WHERE NOT EXISTS (SELECT 1 FROM gone WHERE gone.message_id = c.id);
    -- A second statement: one statement cannot both delete a row and insert over it.
    INSERT INTO message_search_recent (message_id)
    SELECT o.id FROM old_rows o JOIN new_rows n ON n.id = o.id
    WHERE (o.content, o.content_json, o.tool_name, o.tool_calls)
          IS DISTINCT FROM (n.content, n.content_json, n.tool_name, n.tool_calls)
    ON CONFLICT (message_id) DO UPDATE SET words = NULL, trigrams = NULL;
    RETURN NULL;
END $$;
--> statement-breakpoint
CREATE FUNCTION message_search_queue_reset() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
BEGIN
    TRUNCATE message_search_blocks, message_search_recent, message_search_removed;
    UPDATE message_search_merged SET messages = 0, tokens = 0;
    RETURN NULL;
END $$;
--> statement-breakpoint
-- The triggers come before the backfill: creating them locks messages against writes until the migration
-- commits, so no message can be written between the backfill's snapshot and the triggers.
CREATE TRIGGER messages_search_queue_insert AFTER INSERT ON messages
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION message_search_queue_add();
--> statement-breakpoint
CREATE TRIGGER messages_search_queue_delete AFTER DELETE ON messages
    REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION message_search_queue_remove();
--> statement-breakpoint
CREATE TRIGGER messages_search_queue_update AFTER UPDATE ON messages
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION message_search_queue_change();
--> statement-breakpoint
CREATE TRIGGER messages_search_queue_truncate AFTER TRUNCATE ON messages
    FOR EACH STATEMENT EXECUTE FUNCTION message_search_queue_reset();
--> statement-breakpoint
-- Every existing message waits to be tokenized: the library builds the blocks from them on the store's first
-- search (or `hermes-sessiondb migrate`), a bounded piece per transaction.
INSERT INTO message_search_recent (message_id) SELECT id FROM messages;
--> statement-breakpoint
-- Nothing reads the per-word rows any more (the words and their positions are in the blocks).
DROP TRIGGER messages_search_terms_insert ON messages;
--> statement-breakpoint
DROP TRIGGER messages_search_terms_delete ON messages;
--> statement-breakpoint
DROP TRIGGER messages_search_terms_update ON messages;
--> statement-breakpoint
DROP TRIGGER messages_search_terms_truncate ON messages;
--> statement-breakpoint
DROP FUNCTION message_search_terms_add();
--> statement-breakpoint
DROP FUNCTION message_search_terms_remove();
--> statement-breakpoint
DROP FUNCTION message_search_terms_change();
--> statement-breakpoint
DROP FUNCTION message_search_terms_reset();
--> statement-breakpoint
DROP TABLE message_search_terms;
