-- The email-code plugin: the one live code per (app, address), stored only
-- as an HMAC; the address is EmailAddress.text (lower-cased, the domain
-- IDNA-encoded). Its message waits in the outbox (Migrations/0016_outbox.sql),
-- queued by the statement that stores the code.
CREATE TABLE email_codes (
    app_id        uuid        NOT NULL REFERENCES apps (app_id) ON DELETE CASCADE,
    email         text        COLLATE "C" NOT NULL CHECK (octet_length(email) BETWEEN 3 AND 254),
    code_hmac     bytea       NOT NULL,
    attempts_left integer     NOT NULL CHECK (attempts_left >= 0),
    sent_at       timestamptz NOT NULL DEFAULT now(),
    expires_at    timestamptz NOT NULL,
    PRIMARY KEY (app_id, email)
);
