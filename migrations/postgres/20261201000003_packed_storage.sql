-- Cache payloads and step outputs arrive LZ4-compressed: PostgreSQL's own
-- TOAST compression (pglz) only spends time on them (about 6 ms of a
-- 30-60 ms cached `dragnet run` at 0.5 MB) and saves nothing. Store them
-- out of line as they are. Applies to rows written from now on.
ALTER TABLE run_steps ALTER COLUMN output_packed SET STORAGE EXTERNAL;
ALTER TABLE cache_entries ALTER COLUMN payload SET STORAGE EXTERNAL;
