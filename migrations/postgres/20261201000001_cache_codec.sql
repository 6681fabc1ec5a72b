-- Cache payloads name their codec: 'lz4' for rows written from now on,
-- 'zlib' for every row written before (read as before). Their payload is
-- then of layout 2 (split again when read); new rows are of layout 3 (the
-- items' offsets stored beside them), told apart by the payload itself.
ALTER TABLE cache_entries ADD COLUMN codec TEXT NOT NULL DEFAULT 'zlib';
