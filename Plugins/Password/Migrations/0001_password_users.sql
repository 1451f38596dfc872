-- The password plugin's user directory: one row per (app, user id), the
-- password only as a PHC string (argon2id, or an imported argon2i/bcrypt
-- hash until the user's next login upgrades it).

CREATE TABLE password_users (
    app_id        uuid        NOT NULL REFERENCES apps (app_id) ON DELETE CASCADE,
    -- "C" collation: byte order, so prefix filters and cursors use the key.
    user_id       text        COLLATE "C" NOT NULL CHECK (octet_length(user_id) BETWEEN 1 AND 256),
    password_hash text        NOT NULL CHECK (password_hash LIKE '$%' AND length(password_hash) <= 127),
    first_name    text        CHECK (octet_length(first_name) <= 256),
    last_name     text        CHECK (octet_length(last_name) <= 256),
    display_name  text        CHECK (octet_length(display_name) <= 256),
    avatar_url    text        CHECK (octet_length(avatar_url) <= 2048),
    disabled      boolean     NOT NULL DEFAULT false,
    created_at    timestamptz NOT NULL DEFAULT now(),
    updated_at    timestamptz NOT NULL DEFAULT now(),
    last_login_at timestamptz,
    PRIMARY KEY (app_id, user_id)
);
