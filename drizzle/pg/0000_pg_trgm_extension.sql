-- Custom SQL migration: pg_trgm, before anything uses gin_trgm_ops (drizzle-kit does not emit extensions).
-- Trigram matching serves CJK text and substrings, the job FTS5's trigram tokenizer does on SQLite.
-- Note: pg_trgm only sees multibyte letters when the database's LC_CTYPE is a UTF-8 locale (not "C").
CREATE EXTENSION IF NOT EXISTS pg_trgm;
