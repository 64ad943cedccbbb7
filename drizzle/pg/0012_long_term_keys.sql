-- Custom SQL migration: a bounded key for a term's blocks (src/search/term-key.ts). FTS5 indexes a token of any
-- length (a pasted base64 image is one unicode61 token), but a btree entry holds about 2.7 KB: the merge of a
-- longer term failed, and so did every later catch-up. A term over 1,024 UTF-8 bytes is now keyed by its first
-- 1,024 bytes and its SHA-256, the whole term kept in full_term (NULL for the others: no table rewrite).
ALTER TABLE message_search_blocks ADD COLUMN full_term bytea;
--> statement-breakpoint
-- Blocks of long terms that did fit (a compressible term, compressed in the index) move to their new key.
UPDATE message_search_blocks
SET full_term = term, term = substring(term FROM 1 FOR 1024) || sha256(term)
WHERE octet_length(term) > 1024;
