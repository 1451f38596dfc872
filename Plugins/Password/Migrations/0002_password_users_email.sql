-- The email profile field (ProfileField.email): a column, as each profile field has.
ALTER TABLE password_users ADD COLUMN email text CHECK (octet_length(email) <= 254);
