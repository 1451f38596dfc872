-- A passkey added on the word of a session whose sign-in was one factor is
-- bound at that level: it never counts as two factors, and it lives no
-- longer than the user's sessions (a change of the user that ends them all
-- takes it too). The session that added it; NULL for one added by a
-- multi-factor session or through the admin API.
ALTER TABLE passkeys ADD COLUMN one_factor_session_id uuid;
