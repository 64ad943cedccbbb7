-- Custom SQL migration: the word index reads a bounded window of a message, so no message is too big for Postgres.
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
-- Same cut as 0002 (every run of non-alphanumerics separates words; 'simple' lower-cases), on the bounded text.
ALTER TABLE messages ADD COLUMN search_vector tsvector
    GENERATED ALWAYS AS (to_tsvector('simple'::regconfig,
        regexp_replace(message_word_window(message_search_text(content, content_json, tool_name, tool_calls)),
            '[^[:alnum:]]+', ' ', 'g'))) STORED;
--> statement-breakpoint
CREATE INDEX idx_messages_search_vector ON messages USING gin (search_vector);
