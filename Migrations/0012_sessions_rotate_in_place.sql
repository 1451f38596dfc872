-- A refresh rotates its session's row (generation, token digests, last use,
-- idle expiry). PostgreSQL can then update the row on its own page without
-- writing any index entry (a HOT update) only if no indexed column changes
-- and the page has room: the maintenance index leaves out the idle expiry,
-- and pages keep a fifth free. (An idle-ended session is then deleted 30
-- days after its absolute end or its revocation, not after its idle end.)
DROP INDEX sessions_ended;
CREATE INDEX sessions_ended ON sessions ((least(coalesce(revoked_at, expires_at), expires_at)));
ALTER TABLE sessions SET (fillfactor = 80);
