-- Self-service codes (Plugins/EmailCode/Accounts): one live code per (app,
-- key), stored only as an HMAC. The key names the flow and the user
-- (`v:<user>` verification, `r:<user>` recovery, `c:<user>` address
-- change) or, for an address nobody has, the flow and the address (`x:v:`,
-- `x:r:`), so unknown addresses cost what known ones do. Its message waits in
-- the outbox, queued by the statement that stores the code.
CREATE TABLE account_codes (
    app_id        uuid        NOT NULL REFERENCES apps (app_id) ON DELETE CASCADE,
    subject       text        COLLATE "C" NOT NULL CHECK (octet_length(subject) BETWEEN 3 AND 300),
    code_hmac     bytea       NOT NULL,
    attempts_left integer     NOT NULL CHECK (attempts_left >= 0),
    sent_at       timestamptz NOT NULL DEFAULT now(),
    expires_at    timestamptz NOT NULL,
    PRIMARY KEY (app_id, subject)
);
