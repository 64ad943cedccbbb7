-- Custom SQL migration: mark the file as a Hermes state.db at schema version 11.
-- Hermes reads this single row on open to decide which of its data migrations to run; with 11 it runs
-- none, so the Python reference can open a database created by hermes-sessiondb without touching it.
INSERT INTO schema_version (version) SELECT 11 WHERE NOT EXISTS (SELECT 1 FROM schema_version);
