-- What a process needs to start a submitted run it did not submit (a
-- takeover, or a worker): the run's `$.trigger`, whether it reads the
-- cache, and the steps of an earlier run it keeps, as JSON.
ALTER TABLE runs ADD COLUMN launch TEXT;
