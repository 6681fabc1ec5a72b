-- A step's output is written once, LZ4-compressed, into output_packed
-- (output_bytes: its length uncompressed); output (JSON text) stays for rows
-- written before, and is read when output_packed is NULL. Outputs older
-- than the retention setting are cleared by the sweeper (all three NULL);
-- the step's other columns, and its run, stay.
ALTER TABLE run_steps ADD COLUMN output_packed BLOB;
ALTER TABLE run_steps ADD COLUMN output_bytes INTEGER;
CREATE INDEX IF NOT EXISTS runs_finished_at ON runs (finished_at);
