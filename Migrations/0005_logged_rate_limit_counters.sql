-- Rate-limit counters become a logged table, so they reach the standbys and
-- survive a crash or failover. UNLOGGED, a failover emptied them and gave
-- every client a fresh budget (Benchmarks/ha/run measured a whole `ip`
-- budget again right after one); logged, Benchmarks/load/run measured no
-- difference in tokens/s or CPU per token, as each batch's commit already
-- writes WAL for its audit rows. The rewrite is quick: expired counters are
-- deleted every minute.
ALTER TABLE rate_limit_counters SET LOGGED;
