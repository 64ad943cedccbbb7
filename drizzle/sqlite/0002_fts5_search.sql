-- Custom SQL migration: Hermes v11 message search (drizzle-kit cannot model virtual tables or triggers).
-- The DDL is Hermes' FTS_SQL and FTS_TRIGRAM_SQL verbatim: two inline (self-contained) FTS5 tables over
-- content || ' ' || tool_name || ' ' || tool_calls, kept in step by six triggers. Inline mode means deletes
-- are plain DELETEs by rowid (the external-content 'delete' command would fail, because the indexed text
-- is the concatenation, not messages.content).
-- The migration runs on an empty messages table, so there is nothing to backfill.

-- Word index, default unicode61 tokenizer.
CREATE VIRTUAL TABLE IF NOT EXISTS messages_fts USING fts5(
    content
);
--> statement-breakpoint
CREATE TRIGGER IF NOT EXISTS messages_fts_insert AFTER INSERT ON messages BEGIN
    INSERT INTO messages_fts(rowid, content) VALUES (
        new.id,
        COALESCE(new.content, '') || ' ' || COALESCE(new.tool_name, '') || ' ' || COALESCE(new.tool_calls, '')
    );
END;
--> statement-breakpoint
CREATE TRIGGER IF NOT EXISTS messages_fts_delete AFTER DELETE ON messages BEGIN
    DELETE FROM messages_fts WHERE rowid = old.id;
END;
--> statement-breakpoint
CREATE TRIGGER IF NOT EXISTS messages_fts_update AFTER UPDATE ON messages BEGIN
    DELETE FROM messages_fts WHERE rowid = old.id;
    INSERT INTO messages_fts(rowid, content) VALUES (
        new.id,
        COALESCE(new.content, '') || ' ' || COALESCE(new.tool_name, '') || ' ' || COALESCE(new.tool_calls, '')
    );
END;
--> statement-breakpoint
-- Substring index for CJK and partial words (needs SQLite >= 3.34; better-sqlite3 bundles a newer one).
CREATE VIRTUAL TABLE IF NOT EXISTS messages_fts_trigram USING fts5(
    content,
    tokenize='trigram'
);
--> statement-breakpoint
CREATE TRIGGER IF NOT EXISTS messages_fts_trigram_insert AFTER INSERT ON messages BEGIN
    INSERT INTO messages_fts_trigram(rowid, content) VALUES (
        new.id,
        COALESCE(new.content, '') || ' ' || COALESCE(new.tool_name, '') || ' ' || COALESCE(new.tool_calls, '')
    );
END;
--> statement-breakpoint
CREATE TRIGGER IF NOT EXISTS messages_fts_trigram_delete AFTER DELETE ON messages BEGIN
    DELETE FROM messages_fts_trigram WHERE rowid = old.id;
END;
--> statement-breakpoint
CREATE TRIGGER IF NOT EXISTS messages_fts_trigram_update AFTER UPDATE ON messages BEGIN
    DELETE FROM messages_fts_trigram WHERE rowid = old.id;
    INSERT INTO messages_fts_trigram(rowid, content) VALUES (
        new.id,
        COALESCE(new.content, '') || ' ' || COALESCE(new.tool_name, '') || ' ' || COALESCE(new.tool_calls, '')
    );
END;
