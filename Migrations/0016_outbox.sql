-- The outbox: a message a request queued (an email code's mail), written by
-- the same statement as what it carries, and delivered by a worker on any
-- replica (GatewayCourier's OutboxWorker). `payload` is the message sealed
-- (AES-GCM under a key the channel derives from the master key), set to
-- NULL once the message is delivered or given up. A delivery holds a lease
-- (`leased_until`) rather than a lock, so a replica that dies mid-delivery
-- leaves a message another takes once the lease ends; `attempts` fences a
-- late finish of a lease that ran out.
CREATE TABLE outbox (
    app_id          uuid        NOT NULL REFERENCES apps (app_id) ON DELETE CASCADE,
    message_id      uuid        NOT NULL,
    channel         text        NOT NULL CHECK (octet_length(channel) BETWEEN 1 AND 32),
    request_id      text        NOT NULL CHECK (octet_length(request_id) <= 200),
    -- The user the message is for, when known: their deletion or disabling cancels what is queued.
    user_id         text        CHECK (octet_length(user_id) <= 256),
    payload         bytea,
    state           text        NOT NULL DEFAULT 'queued' CHECK (state IN ('queued', 'delivered', 'failed')),
    attempts        integer     NOT NULL DEFAULT 0 CHECK (attempts >= 0),
    next_attempt_at timestamptz NOT NULL DEFAULT now(),
    leased_until    timestamptz,
    expires_at      timestamptz NOT NULL,
    last_reply      text        CHECK (octet_length(last_reply) <= 512),
    created_at      timestamptz NOT NULL DEFAULT now(),
    finished_at     timestamptz,
    PRIMARY KEY (app_id, message_id)
);

-- What a worker asks each time: the due messages of its channel.
CREATE INDEX outbox_due ON outbox (channel, next_attempt_at) WHERE state = 'queued';
-- A user's queued messages, cancelled when the user is deleted or disabled.
CREATE INDEX outbox_by_user ON outbox (app_id, user_id) WHERE state = 'queued';
-- What maintenance deletes: finished messages, oldest first.
CREATE INDEX outbox_finished ON outbox (finished_at) WHERE state <> 'queued';
