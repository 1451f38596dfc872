-- Operator console sign-ins. The cookie holds a random session id; only its
-- SHA-256 is stored. sealed_token is the admin token the session acts with,
-- AES-GCM under the master key (as private keys are), so each console page
-- is an admin API call checked like any other: a revoked or expired token
-- ends its sessions at their next page.
CREATE TABLE console_sessions (
    session_hash bytea       PRIMARY KEY,
    sealed_token bytea       NOT NULL,
    created_at   timestamptz NOT NULL DEFAULT now(),
    -- Idle expiry, moved forward by each page; never past ends_at.
    expires_at   timestamptz NOT NULL,
    ends_at      timestamptz NOT NULL,
    CHECK (expires_at <= ends_at)
);

CREATE INDEX console_sessions_by_expiry ON console_sessions (expires_at);
