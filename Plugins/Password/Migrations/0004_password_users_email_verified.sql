-- Whether the user proved they receive mail at `email` (a self-service
-- code sent there came back): true or false where known, NULL where an
-- admin typed the address. It stays only while the address does.
ALTER TABLE password_users ADD COLUMN email_verified boolean;
