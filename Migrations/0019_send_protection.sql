-- Send protection (GatewayCourier's SendGuard): what the code channels keep
-- against abuse beside the rate-limit counters.
--
-- A tripped pumping breaker, one row per app, channel and destination
-- prefix: sends to the prefix are refused until `open_until`. An operator's
-- release sets `open_until` to the moment of release and `released_at`: the
-- breaker then stays closed for one window, for the traffic the operator
-- vouched for. The row stays (the last trip is what the console shows).
CREATE TABLE send_breakers (
    app_id      uuid        NOT NULL REFERENCES apps (app_id) ON DELETE CASCADE,
    channel     text        NOT NULL CHECK (octet_length(channel) BETWEEN 1 AND 32),
    prefix      text        NOT NULL CHECK (octet_length(prefix) BETWEEN 2 AND 16),
    -- Which trip this is: a statement that tripped the breaker knows it by this.
    trip_id     uuid        NOT NULL,
    tripped_at  timestamptz NOT NULL,
    open_until  timestamptz NOT NULL,
    -- The sends the window allowed when it tripped, for the incident's questions.
    threshold   integer     NOT NULL CHECK (threshold >= 0),
    released_at timestamptz,
    released_by text        CHECK (octet_length(released_by) <= 200),
    -- How long a release keeps the breaker closed (one window, in seconds).
    grace       integer     NOT NULL CHECK (grace >= 0),
    PRIMARY KEY (app_id, channel, prefix)
);

-- Human-check tokens already used (their SHA-256), kept as long as a
-- provider's token lives: a token is good for one send here, whatever the
-- provider remembers. Deleted by the maintenance pass once expired.
CREATE TABLE human_check_tokens (
    app_id     uuid        NOT NULL REFERENCES apps (app_id) ON DELETE CASCADE,
    token_hash bytea       NOT NULL CHECK (octet_length(token_hash) = 32),
    expires_at timestamptz NOT NULL,
    PRIMARY KEY (app_id, token_hash)
);
CREATE INDEX human_check_tokens_expiry ON human_check_tokens (expires_at);
