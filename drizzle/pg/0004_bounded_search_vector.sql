-- Custom SQL migration: the Postgres word index rebuilt for bounded size, exact words and BM25.
-- 1. It reads a bounded window of a message, so no message is too big for Postgres (below).
-- 2. It cuts words itself (message_word_vector), so positions and lengths are those FTS5 sees.
-- 3. It stores each message's word count (search_length) and the corpus totals (message_search_stats),
--    which BM25 ranks with, as FTS5 does on SQLite.
-- 4. It indexes CJK characters and pairs (search_cjk), so a short CJK term is found through an index.
-- The table is rewritten once (the generated columns); a test proves no row or search result changes.
--
-- A tsvector holds at most 1 MB of lexemes and positions ("string is too long for tsvector", SQLSTATE 54000),
-- which a 1 MB tool result (`git rev-list`, a log, a CJK document) can exceed: Postgres refused messages SQLite
-- stores. The message itself is still stored whole; only the word vector is built from at most 100,001
-- characters of message_search_text() (below). Words in the middle of a longer message are not
-- word-searchable here; substring search (the trigram index and the ILIKE fallbacks) still covers the whole text.
--
-- Why 100,000 characters: a token of c characters costs at most 4c bytes of lexeme (one lower-cased code point is
-- at most 4 UTF-8 bytes), 1 byte of alignment and 2 + 2 bytes of position data, so at most 9 bytes per character:
-- 900,009 bytes here, under the 1,048,575-byte limit even for adversarial text. Measured on PostgreSQL 15 (string
-- part / whole datum) for 1 MB messages: distinct 2-character tokens of 4-byte CJK (extension B) 400,004 / 533,348
-- bytes, the worst found; distinct 1-character 4-byte tokens 356,320 / 527,208; 40-hex `git rev-list` lines
-- 108,198 / 118,650; 2,047-byte words 100,216 / 100,440. Words over 2,047 bytes are skipped with a NOTICE and
-- positions above 16,383 share the last one, as before.
--
-- Postgres 15 cannot change a generated column's expression, so the column is dropped and added again: the ADD
-- rewrites messages once (every row's vector is recomputed, every index on messages rebuilt) under an ACCESS
-- EXCLUSIVE lock, inside the migrator's single transaction, so a failure leaves the old column in place.

-- The text the word vector is built from: message_search_text() itself up to 100,000 characters; beyond that its
-- first 90,000 and last 10,000 characters. The tail keeps tool_name and tool_calls (appended after the content)
-- and a tool result's last lines word-searchable. Immutable, so a generated column may use it; like
-- message_search_text(), never CREATE OR REPLACE it: stored vectors would silently disagree. Change it in a
-- migration that adds the column again.
CREATE FUNCTION message_word_window(search_text text)
RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN CASE WHEN length(search_text) <= 100000 THEN search_text
            ELSE left(search_text, 90000) || ' ' || right(search_text, 10000) END;
--> statement-breakpoint
DROP INDEX idx_messages_search_vector;
--> statement-breakpoint
ALTER TABLE messages DROP COLUMN search_vector;
--> statement-breakpoint
-- The word vector, cut as FTS5's unicode61 cuts words: every maximal run of letters and digits is one word,
-- lower-cased, numbered in order (so phrase adjacency is FTS5's). Postgres' own text parser would read
-- "8e296a06" (a git hash) as a number and split it, shifting every later position; here no parser runs.
-- Positions above 16,383 share the last one, and a word over 2,047 bytes cannot be a lexeme (both are
-- tsvector limits; to_tsvector drops such words too). Like the functions above: never CREATE OR REPLACE it.
CREATE FUNCTION message_word_vector(search_text text)
RETURNS tsvector
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN (SELECT COALESCE(string_agg('''' || w || ''':' || least(n, 16383), ' '), '')::tsvector
        FROM regexp_split_to_table(lower(search_text), '[^[:alnum:]]+') WITH ORDINALITY AS words(w, n)
        WHERE w <> '' AND octet_length(w) <= 2047);
--> statement-breakpoint
-- The CJK characters and pairs of adjacent CJK characters of a text (Hermes' CJK ranges). Hermes searches a
-- CJK term shorter than 3 characters with a LIKE scan, which pg_trgm cannot serve (it needs 3 characters), so
-- a term that is nowhere read every row. A GIN index over these grams finds the rows holding every pair of
-- the term (or its single character) first; the LIKE still decides. Rows without CJK skip the work.
CREATE FUNCTION message_cjk_grams(search_text text)
RETURNS text[]
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN CASE WHEN search_text ~ '[\u3000-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\U00020000-\U0002a6df]' THEN
    ARRAY(SELECT DISTINCT substr(runs.run, i, n)
          FROM regexp_matches(search_text, '[\u3000-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\U00020000-\U0002a6df]+', 'g') AS found(m),
               LATERAL (SELECT found.m[1] AS run) runs,
               LATERAL generate_series(1, char_length(runs.run)) AS i,
               LATERAL (VALUES (1), (2)) AS lengths(n)
          WHERE i + n - 1 <= char_length(runs.run))
    ELSE '{}' END;
--> statement-breakpoint
-- The generated columns in one statement, so the table is rewritten once. search_length is the number of
-- words in the whole searchable text: FTS5's document length, which BM25 normalises by.
ALTER TABLE messages
    ADD COLUMN search_vector tsvector
        GENERATED ALWAYS AS (message_word_vector(message_word_window(message_search_text(content, content_json, tool_name, tool_calls)))) STORED,
    ADD COLUMN search_length integer
        GENERATED ALWAYS AS (regexp_count(message_search_text(content, content_json, tool_name, tool_calls), '[[:alnum:]]+')) STORED,
    ADD COLUMN search_cjk text[]
        GENERATED ALWAYS AS (message_cjk_grams(message_word_window(message_search_text(content, content_json, tool_name, tool_calls)))) STORED;
--> statement-breakpoint
CREATE INDEX idx_messages_search_vector ON messages USING gin (search_vector);
--> statement-breakpoint
CREATE INDEX idx_messages_search_cjk ON messages USING gin (search_cjk);
--> statement-breakpoint
-- BM25's corpus statistics (FTS5 keeps them in its own tables): how many messages there are and how many words
-- they hold. Statement-level triggers keep them in step with every write; the counts are spread over 16 rows,
-- one per connection modulo 16, so concurrent writers do not queue on one row. Readers sum the rows.
CREATE TABLE message_search_stats (
    shard integer PRIMARY KEY,
    docs bigint NOT NULL DEFAULT 0,
    tokens bigint NOT NULL DEFAULT 0
);
--> statement-breakpoint
CREATE FUNCTION message_search_stats_add() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO message_search_stats AS s (shard, docs, tokens)
    SELECT pg_backend_pid() % 16, count(*), COALESCE(sum(search_length), 0) FROM new_rows
    ON CONFLICT (shard) DO UPDATE SET docs = s.docs + excluded.docs, tokens = s.tokens + excluded.tokens;
    RETURN NULL;
END $$;
--> statement-breakpoint
CREATE FUNCTION message_search_stats_remove() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO message_search_stats AS s (shard, docs, tokens)
    SELECT pg_backend_pid() % 16, -count(*), -COALESCE(sum(search_length), 0) FROM old_rows
    ON CONFLICT (shard) DO UPDATE SET docs = s.docs + excluded.docs, tokens = s.tokens + excluded.tokens;
    RETURN NULL;
END $$;
--> statement-breakpoint
CREATE FUNCTION message_search_stats_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO message_search_stats AS s (shard, docs, tokens)
    SELECT pg_backend_pid() % 16, 0,
           COALESCE((SELECT sum(search_length) FROM new_rows), 0) - COALESCE((SELECT sum(search_length) FROM old_rows), 0)
    ON CONFLICT (shard) DO UPDATE SET tokens = s.tokens + excluded.tokens;
    RETURN NULL;
END $$;
--> statement-breakpoint
CREATE FUNCTION message_search_stats_reset() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM message_search_stats;
    RETURN NULL;
END $$;
--> statement-breakpoint
CREATE TRIGGER messages_search_stats_insert AFTER INSERT ON messages
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION message_search_stats_add();
--> statement-breakpoint
CREATE TRIGGER messages_search_stats_delete AFTER DELETE ON messages
    REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION message_search_stats_remove();
--> statement-breakpoint
CREATE TRIGGER messages_search_stats_update AFTER UPDATE ON messages
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION message_search_stats_change();
--> statement-breakpoint
CREATE TRIGGER messages_search_stats_truncate AFTER TRUNCATE ON messages
    FOR EACH STATEMENT EXECUTE FUNCTION message_search_stats_reset();
--> statement-breakpoint
INSERT INTO message_search_stats (shard, docs, tokens) SELECT 0, count(*), COALESCE(sum(search_length), 0) FROM messages;
