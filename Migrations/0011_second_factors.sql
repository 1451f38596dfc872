-- A second factor (README, "Second factor"): a user's TOTP authenticator and
-- their recovery codes, per app. The TOTP secret is sealed under the master
-- key (as app keys are); only the SHA-256 of each recovery code is kept.
CREATE TABLE second_factors (
    app_id       uuid        NOT NULL REFERENCES apps (app_id) ON DELETE CASCADE,
    user_id      text        NOT NULL,
    -- A new one for each enrolment: what a code was checked against is what it spends.
    factor_id    uuid        NOT NULL UNIQUE,
    totp_sealed  bytea       NOT NULL,
    created_at   timestamptz NOT NULL,
    -- NULL until the user typed one code: until then the factor is asked for nothing.
    confirmed_at timestamptz,
    -- The last time step whose code was taken: a code is taken once, ever.
    last_step    bigint,
    last_used_at timestamptz,
    PRIMARY KEY (app_id, user_id)
);

CREATE TABLE recovery_codes (
    factor_id   uuid        NOT NULL REFERENCES second_factors (factor_id) ON DELETE CASCADE,
    code_sha256 bytea       NOT NULL CHECK (octet_length(code_sha256) = 32),
    used_at     timestamptz,
    PRIMARY KEY (factor_id, code_sha256)
);

-- A sign-in whose first factor was right, waiting for the second: a ticket
-- the client holds (only its SHA-256 is kept), single use, short-lived.
CREATE TABLE mfa_tickets (
    ticket_sha256   bytea       PRIMARY KEY CHECK (octet_length(ticket_sha256) = 32),
    app_id          uuid        NOT NULL REFERENCES apps (app_id) ON DELETE CASCADE,
    user_id         text        NOT NULL,
    nonce           text        NOT NULL,
    credential_type text        NOT NULL,
    methods         text[]      NOT NULL,
    profile         jsonb       NOT NULL DEFAULT '{}' CHECK (jsonb_typeof(profile) = 'object'),
    device_label    text,
    created_at      timestamptz NOT NULL,
    expires_at      timestamptz NOT NULL,
    spent_at        timestamptz
);

-- AuditMaintenance deletes tickets a day after they expire.
CREATE INDEX mfa_tickets_expired ON mfa_tickets (expires_at);

-- An app's second-factor policy (SecondFactorSettings as JSON); NULL: off.
ALTER TABLE apps ADD COLUMN mfa jsonb CHECK (mfa IS NULL OR jsonb_typeof(mfa) = 'object');
