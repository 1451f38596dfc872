-- A user found by their address (PasswordUserStore.find(email:in:), for
-- email-code sign-ins), compared case-insensitively.
CREATE INDEX password_users_by_email ON password_users (app_id, lower(email)) WHERE email IS NOT NULL;
