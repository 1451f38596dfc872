-- A deleted user's tickets go with their factor (PostgresSecondFactors.forget).
CREATE INDEX mfa_tickets_by_user ON mfa_tickets (app_id, user_id);
