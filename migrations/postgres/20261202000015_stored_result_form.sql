-- What a stored result's text is (issue 24: results are read as MCP
-- resources): its media type, and `base64` when it holds binary content
-- (an image or audio block too large to pass). NULL on rows written before
-- this, which are JSON.
ALTER TABLE stored_results ADD COLUMN media_type TEXT;
ALTER TABLE stored_results ADD COLUMN encoding TEXT;
