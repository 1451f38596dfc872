-- The user lifecycle's journal (UserChangeJournal): a change to a user
-- (deleted, disabled, a new password or address, every session ended) that
-- not every holder of theirs (sessions, tickets, factors, passkeys, numbers,
-- codes, queued mail) has heard yet. A directory write inserts its changes
-- in its own transaction; the request that made them tells the holders and
-- deletes the row. A row older than the sweep age is a request that died
-- half way: any replica claims it (`leased_until`, a lease rather than a
-- lock, so a sweeper that dies leaves it to the next), tells the holders
-- again and deletes it.
CREATE TABLE user_changes (
    change_id       uuid        PRIMARY KEY,
    app_id          uuid        NOT NULL REFERENCES apps (app_id) ON DELETE CASCADE,
    user_id         text        NOT NULL CHECK (octet_length(user_id) <= 256),
    kind            text        NOT NULL CHECK (octet_length(kind) <= 32),
    request_id      text        NOT NULL CHECK (octet_length(request_id) <= 200),
    actor           uuid,
    keeping_session uuid,
    recorded_at     timestamptz NOT NULL DEFAULT now(),
    leased_until    timestamptz
);

-- What a sweep asks: the oldest unfinished changes.
CREATE INDEX user_changes_by_age ON user_changes (recorded_at);
