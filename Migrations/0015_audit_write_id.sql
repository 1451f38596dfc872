-- The ledger's own id for each queued item whose row it writes
-- (LedgerWriteStatement.notWrittenBefore): a batch retried after an attempt
-- whose fate is unknown skips a row only if that item's earlier attempt
-- wrote it. The request id alone is not enough: it is the client's
-- x-request-id when one is sent, and two requests may send the same, which
-- once left the second token without its row. NULL for rows written
-- elsewhere (the admin API's, the backlog's). Nullable with no default:
-- adding it rewrites no partition.
ALTER TABLE audit_events ADD COLUMN write_id uuid;
