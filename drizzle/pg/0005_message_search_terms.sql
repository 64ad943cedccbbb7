-- Custom SQL migration: an inverted index of words with their positions (postings), so word search reads a
-- narrow index instead of every matching message's vector.
--
-- Why: the GIN index on search_vector says which rows match, not how often or where, so BM25 and phrase checks
-- read each candidate's vector from the messages heap (detoasting it when big): about 4-17 µs per candidate,
-- 100-250 ms for a common word, a code term or a prefix at 200,000 messages. Here one row per (word, message)
-- holds the word's positions and the message's length, and its primary key INCLUDEs them, so a word's newest
-- matches, their frequencies and phrase adjacency come from an index-only scan in id order (1-15 ms).
--
-- The cost, measured at 200,000 messages: 8.5 million rows, about 650 MB of table and 580 MB of index next to
-- messages' 470 MB; an append writes one row per distinct word of the message (about 42 on average).
-- Nothing else reads the table; messages is not rewritten (triggers fill it, the backfill below reads it).
--
-- The rows are exactly unnest(search_vector) of each message: a word as the vector holds it (at most 2,047
-- bytes), its positions (at most 256, each at most 16,383: tsvector's limits, which BM25 inherits as before).
-- COLLATE "C" orders words by their bytes, so a prefix `deploy*` is the key range ['deploy', 'deploz').
--
-- doc_length is the message's length as FTS5 counts it: search_length, plus one for structured content, whose
-- SQLite form "\x00json:[…]" gives FTS5 one more word ("json") than the jsonb text here. Without it a structured
-- message ranked below an equal plain one on SQLite and level with it here. message_search_stats counts the
-- same lengths from now on (below).
CREATE TABLE message_search_terms (
    term text COLLATE "C" NOT NULL,
    message_id bigint NOT NULL,
    doc_length integer NOT NULL,
    positions smallint[] NOT NULL
);
--> statement-breakpoint
-- Statement-level triggers, as for message_search_stats: one INSERT … SELECT per statement, not per row. No
-- foreign key: a cascading delete would check it row by row; the delete trigger removes a message's words.
CREATE FUNCTION message_search_terms_add() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO message_search_terms (term, message_id, doc_length, positions)
    SELECT u.lexeme, n.id, n.search_length + (n.content_json IS NOT NULL)::int, COALESCE(u.positions, '{}')
    FROM new_rows n, unnest(n.search_vector) u;
    RETURN NULL;
END $$;
--> statement-breakpoint
CREATE FUNCTION message_search_terms_remove() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM message_search_terms t USING old_rows o, unnest(o.search_vector) u
    WHERE t.term = u.lexeme AND t.message_id = o.id;
    RETURN NULL;
END $$;
--> statement-breakpoint
-- An update rewrites the words of the rows whose vector or length changed (a new token count does not).
CREATE FUNCTION message_search_terms_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM message_search_terms t USING old_rows o JOIN new_rows n ON n.id = o.id, unnest(o.search_vector) u
    WHERE (o.search_vector, o.search_length, o.content_json IS NULL) IS DISTINCT FROM (n.search_vector, n.search_length, n.content_json IS NULL)
      AND t.term = u.lexeme AND t.message_id = o.id;
    INSERT INTO message_search_terms (term, message_id, doc_length, positions)
    SELECT u.lexeme, n.id, n.search_length + (n.content_json IS NOT NULL)::int, COALESCE(u.positions, '{}')
    FROM new_rows n JOIN old_rows o ON o.id = n.id, unnest(n.search_vector) u
    WHERE (o.search_vector, o.search_length, o.content_json IS NULL) IS DISTINCT FROM (n.search_vector, n.search_length, n.content_json IS NULL);
    RETURN NULL;
END $$;
--> statement-breakpoint
CREATE FUNCTION message_search_terms_reset() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    TRUNCATE message_search_terms;
    RETURN NULL;
END $$;
--> statement-breakpoint
-- The triggers come before the backfill: creating them locks messages against writes until the migration
-- commits, so no message can be written between the backfill's snapshot and the triggers.
CREATE TRIGGER messages_search_terms_insert AFTER INSERT ON messages
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION message_search_terms_add();
--> statement-breakpoint
CREATE TRIGGER messages_search_terms_delete AFTER DELETE ON messages
    REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION message_search_terms_remove();
--> statement-breakpoint
CREATE TRIGGER messages_search_terms_update AFTER UPDATE ON messages
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION message_search_terms_change();
--> statement-breakpoint
CREATE TRIGGER messages_search_terms_truncate AFTER TRUNCATE ON messages
    FOR EACH STATEMENT EXECUTE FUNCTION message_search_terms_reset();
--> statement-breakpoint
-- BM25's corpus totals count FTS5's lengths too (see doc_length above). Replacing these plpgsql trigger functions
-- is safe: no stored value depends on them, and the totals are recomputed below.
CREATE OR REPLACE FUNCTION message_search_stats_add() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO message_search_stats AS s (shard, docs, tokens)
    SELECT pg_backend_pid() % 16, count(*), COALESCE(sum(search_length + (content_json IS NOT NULL)::int), 0) FROM new_rows
    ON CONFLICT (shard) DO UPDATE SET docs = s.docs + excluded.docs, tokens = s.tokens + excluded.tokens;
    RETURN NULL;
END $$;
--> statement-breakpoint
CREATE OR REPLACE FUNCTION message_search_stats_remove() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO message_search_stats AS s (shard, docs, tokens)
    SELECT pg_backend_pid() % 16, -count(*), -COALESCE(sum(search_length + (content_json IS NOT NULL)::int), 0) FROM old_rows
    ON CONFLICT (shard) DO UPDATE SET docs = s.docs + excluded.docs, tokens = s.tokens + excluded.tokens;
    RETURN NULL;
END $$;
--> statement-breakpoint
CREATE OR REPLACE FUNCTION message_search_stats_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO message_search_stats AS s (shard, docs, tokens)
    SELECT pg_backend_pid() % 16, 0,
           COALESCE((SELECT sum(search_length + (content_json IS NOT NULL)::int) FROM new_rows), 0)
         - COALESCE((SELECT sum(search_length + (content_json IS NOT NULL)::int) FROM old_rows), 0)
    ON CONFLICT (shard) DO UPDATE SET tokens = s.tokens + excluded.tokens;
    RETURN NULL;
END $$;
--> statement-breakpoint
DELETE FROM message_search_stats;
--> statement-breakpoint
INSERT INTO message_search_stats (shard, docs, tokens)
SELECT 0, count(*), COALESCE(sum(search_length + (content_json IS NOT NULL)::int), 0) FROM messages;
--> statement-breakpoint
INSERT INTO message_search_terms (term, message_id, doc_length, positions)
SELECT u.lexeme, m.id, m.search_length + (m.content_json IS NOT NULL)::int, COALESCE(u.positions, '{}')
FROM messages m, unnest(m.search_vector) u;
--> statement-breakpoint
-- Built after the backfill (one sort instead of 8.5 million inserts). INCLUDE makes every search read index-only.
ALTER TABLE message_search_terms ADD CONSTRAINT message_search_terms_pkey PRIMARY KEY (term, message_id) INCLUDE (doc_length, positions);
--> statement-breakpoint
-- Words are skewed (Zipf): the default 100 most common values leave the planner guessing a rare word's count
-- and choosing nested loops where merging id-ordered scans is cheaper. 1,000 keeps its estimates close.
ALTER TABLE message_search_terms ALTER COLUMN term SET STATISTICS 1000;
--> statement-breakpoint
ANALYZE message_search_terms;
