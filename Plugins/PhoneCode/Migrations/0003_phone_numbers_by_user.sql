-- A user's numbers, found when the user is deleted from the app's directory
-- (PhoneCodePlugin.removeCredentials): without it, that is a scan of the table.
CREATE INDEX phone_numbers_by_user ON phone_numbers (app_id, user_id);
