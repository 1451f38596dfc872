-- The email profile field (ProfileField.email): a column, as each profile field has.
ALTER TABLE phone_numbers ADD COLUMN email text CHECK (octet_length(email) <= 254);
