-- The phone-code plugin: each app's directory of numbers bound to user ids,
-- and the one live code per number. Codes are stored only as an HMAC.

CREATE TABLE phone_numbers (
    app_id       uuid        NOT NULL REFERENCES apps (app_id) ON DELETE CASCADE,
    phone_number text        COLLATE "C" NOT NULL CHECK (phone_number ~ '^\+[0-9]{8,15}$'),
    user_id      text        NOT NULL CHECK (octet_length(user_id) BETWEEN 1 AND 256),
    first_name   text        CHECK (octet_length(first_name) <= 256),
    last_name    text        CHECK (octet_length(last_name) <= 256),
    display_name text        CHECK (octet_length(display_name) <= 256),
    avatar_url   text        CHECK (octet_length(avatar_url) <= 2048),
    created_at   timestamptz NOT NULL DEFAULT now(),
    updated_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (app_id, phone_number)
);

-- One live code per (app, number): a new code replaces the old one, a used
-- or exhausted code is deleted.
CREATE TABLE phone_codes (
    app_id        uuid        NOT NULL REFERENCES apps (app_id) ON DELETE CASCADE,
    phone_number  text        COLLATE "C" NOT NULL,
    code_hmac     bytea       NOT NULL,
    attempts_left integer     NOT NULL CHECK (attempts_left >= 0),
    sent_at       timestamptz NOT NULL DEFAULT now(),
    expires_at    timestamptz NOT NULL,
    PRIMARY KEY (app_id, phone_number)
);
