-- Custom SQL migration: the plpgsql trigger functions name message_search_stats / message_search_terms
-- unqualified, and plpgsql resolves names when it runs, through the search_path of whoever wrote to messages.
-- A connection whose search_path lacks the store's schema (a role with search_path = app, a store opened with
-- { schema }) then failed every insert with "relation message_search_stats does not exist". SET search_path
-- FROM CURRENT pins each function to the search_path the migrator runs under: the store's schema (and the
-- schema holding pg_trgm). The SQL-standard functions (RETURN …: message_search_text, message_word_window,
-- message_word_vector, message_cjk_grams) are bound when created and need nothing.
-- A later CREATE OR REPLACE of one of these functions drops the setting: repeat it there.
ALTER FUNCTION message_search_stats_add() SET search_path FROM CURRENT;
--> statement-breakpoint
ALTER FUNCTION message_search_stats_remove() SET search_path FROM CURRENT;
--> statement-breakpoint
ALTER FUNCTION message_search_stats_change() SET search_path FROM CURRENT;
--> statement-breakpoint
ALTER FUNCTION message_search_stats_reset() SET search_path FROM CURRENT;
--> statement-breakpoint
ALTER FUNCTION message_search_terms_add() SET search_path FROM CURRENT;
--> statement-breakpoint
ALTER FUNCTION message_search_terms_remove() SET search_path FROM CURRENT;
--> statement-breakpoint
ALTER FUNCTION message_search_terms_change() SET search_path FROM CURRENT;
--> statement-breakpoint
ALTER FUNCTION message_search_terms_reset() SET search_path FROM CURRENT;
