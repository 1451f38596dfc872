-- Admin tokens, the actor of audited admin writes, and lookups by provider id.

CREATE TABLE admin_tokens (
    token_id     uuid        PRIMARY KEY,
    name         text        NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
    -- 'operator' or 'app:<uuid>'
    scope        text        NOT NULL CHECK (scope = 'operator' OR scope ~ '^app:[0-9a-f-]{36}$'),
    -- SHA-256 of the secret; the secret itself is never stored.
    secret_hash  bytea       NOT NULL UNIQUE,
    created_at   timestamptz NOT NULL DEFAULT now(),
    expires_at   timestamptz,
    revoked_at   timestamptz,
    last_used_at timestamptz
);

ALTER TABLE audit_events ADD COLUMN actor uuid;

-- The validation endpoint finds keys by the token's iss.
CREATE INDEX apps_by_provider ON apps (provider_id);
