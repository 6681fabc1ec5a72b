-- A kept page remembers its answer's `Link` header next target (issue 14),
-- so a walk that follows `Link: <…>; rel="next"` resumes along it too.
ALTER TABLE walk_pages ADD COLUMN next_link TEXT;
