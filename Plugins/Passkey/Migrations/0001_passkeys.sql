-- The passkey plugin. Each challenge the gateway gave, by its SHA-256, for
-- one ceremony of one app (and, for a registration, one user), until it is
-- spent or expires: a response is taken once, on whichever replica.
CREATE TABLE passkey_challenges (
    app_id           uuid        NOT NULL REFERENCES apps (app_id) ON DELETE CASCADE,
    challenge_sha256 bytea       NOT NULL CHECK (octet_length(challenge_sha256) = 32),
    ceremony         text        NOT NULL CHECK (ceremony IN ('registration', 'assertion')),
    user_id          text        CHECK ((ceremony = 'registration') = (user_id IS NOT NULL)),
    expires_at       timestamptz NOT NULL,
    PRIMARY KEY (app_id, challenge_sha256)
);

CREATE INDEX passkey_challenges_expiry ON passkey_challenges (app_id, expires_at);

-- Each user's passkeys: the public key and counter assertions are checked
-- against, and what the admin API lists (never a secret: there is none).
CREATE TABLE passkeys (
    app_id             uuid        NOT NULL REFERENCES apps (app_id) ON DELETE CASCADE,
    credential_id      bytea       NOT NULL CHECK (octet_length(credential_id) BETWEEN 1 AND 1023),
    user_id            text        NOT NULL,
    name               text        NOT NULL CHECK (char_length(name) BETWEEN 1 AND 64),
    public_key         bytea       NOT NULL,
    algorithm          integer     NOT NULL,
    sign_count         bigint      NOT NULL CHECK (sign_count BETWEEN 0 AND 4294967295),
    backup_eligible    boolean     NOT NULL,
    backed_up          boolean     NOT NULL,
    aaguid             uuid        NOT NULL,
    attestation_format text        NOT NULL,
    created_at         timestamptz NOT NULL DEFAULT now(),
    last_used_at       timestamptz,
    PRIMARY KEY (app_id, credential_id)
);

CREATE INDEX passkeys_by_user ON passkeys (app_id, user_id);
