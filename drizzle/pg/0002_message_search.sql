-- Custom SQL migration: the Postgres side of Hermes' message search.
-- SQLite indexes content || ' ' || tool_name || ' ' || tool_calls in two FTS5 tables (word and trigram);
-- here the same text feeds a generated tsvector column (word search) and a trigram GIN index (CJK and
-- substrings). One IMMUTABLE function defines that text, so the column, the index and the search
-- queries cannot drift apart.

-- The searchable text of a message row: plain or structured content, tool name, tool-call JSON.
CREATE FUNCTION message_search_text(content text, content_json jsonb, tool_name text, tool_calls jsonb)
RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN COALESCE(content, content_json::text, '') || ' ' || COALESCE(tool_name, '') || ' ' || COALESCE(tool_calls::text, '');
--> statement-breakpoint
-- Word index, cut like FTS5's unicode61: every run of characters that are not letters or digits is a
-- separator (Postgres' own parser would keep "p2.2", "user@example.com" or "2024-01-01" whole), then the
-- 'simple' configuration lower-cases: no stemming, no stop words. Diacritics are kept (unicode61 folds them).
ALTER TABLE messages ADD COLUMN search_vector tsvector
    GENERATED ALWAYS AS (to_tsvector('simple'::regconfig,
        regexp_replace(message_search_text(content, content_json, tool_name, tool_calls), '[^[:alnum:]]+', ' ', 'g'))) STORED;
--> statement-breakpoint
CREATE INDEX idx_messages_search_vector ON messages USING gin (search_vector);
--> statement-breakpoint
-- Substring index (ILIKE '%…%', similarity) for CJK and partial words.
CREATE INDEX idx_messages_search_trgm ON messages
    USING gin (message_search_text(content, content_json, tool_name, tool_calls) gin_trgm_ops);
