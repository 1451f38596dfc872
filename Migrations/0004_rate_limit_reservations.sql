-- Failure-counted limits reserve their unit before the credential is checked
-- (a conditional add in the same upsert that checks the limit). `granted`
-- holds how many units the counter's latest write reserved, which that
-- write's RETURNING cannot otherwise tell from the new count alone.
ALTER TABLE rate_limit_counters ADD COLUMN granted integer NOT NULL DEFAULT 0;
