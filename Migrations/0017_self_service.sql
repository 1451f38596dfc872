-- An app's self_service settings (SelfServiceSettings as JSON): what its
-- users may do for themselves (sign up, recover, change, delete); NULL: nothing.
ALTER TABLE apps ADD COLUMN self_service jsonb CHECK (self_service IS NULL OR jsonb_typeof(self_service) = 'object');
