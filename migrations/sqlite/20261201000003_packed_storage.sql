-- The PostgreSQL migration of this version stores compressed payloads out
-- of line without TOAST compression; SQLite has no such setting. Kept so
-- both backends share one list of versions.
SELECT 1;
