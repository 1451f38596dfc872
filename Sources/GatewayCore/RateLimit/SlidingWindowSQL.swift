/// Rate-limit counters in SQL: the same semantics as ``SlidingWindow/touch(_:current:previous:)``
/// for a batch of touches in one statement, which `LedgerWriteStatement`
/// (GatewayPostgres) runs with its audit rows. `RateLimitAgreementTests`
/// holds this and the Swift to one table of sequences and to random ones:
/// a change to either that the other lacks fails there.
///
/// A touch counts (+1 whatever the verdict), reserves (as many of its units
/// as the limit has room for: the add and its test happen under the counter
/// row's lock, so any number of statements on any number of gateways grant
/// at most the limit), releases (its units back, never below 0) or only
/// reads. Within a batch,
/// releases come first, then touches in their order, so touches batched
/// together read as if their requests had run one after another.
///
/// Each touch also gets its verdict: a reservation is allowed when it was
/// granted a unit at least, a count when previous × weight + current is at most the limit, a
/// read when one more would be, a release always.
public enum SlidingWindowSQL {
    /// The touches' parameters, `$1` to `$10`, one array each, in the order
    /// of their binding: app id (uuid), policy, subject, window start (int8),
    /// period in seconds (int8), mode (a ``CounterTouch/Mode`` raw value),
    /// request (int8: the touch's request, its place in the batch from 1),
    /// previous window's weight (float8), limit (float8), units (int4).
    public static let parameterCount = 10

    /// The common table expressions, for after `WITH`; the last, `verdicts`,
    /// has a row a touch: `position` (its place in the arrays, from 1),
    /// `request`, `current`, `previous`, `units_granted` (a reservation's;
    /// 0 for the other modes) and `allowed`.
    public static let verdicts = """
        input AS (
            SELECT * FROM unnest($1::uuid[], $2::text[], $3::text[], $4::int8[], $5::int8[], $6::text[], $7::int8[],
                                 $8::float8[], $9::float8[], $10::int4[])
                WITH ORDINALITY AS i(app_id, policy, subject, window_start, period, mode, request,
                                     previous_weight, lim, units, position)
        ),
        totals AS (
            SELECT i.app_id, i.policy, i.subject, i.window_start, max(i.period) AS period,
                   (count(*) FILTER (WHERE i.mode = 'count'))::int4 AS counted,
                   coalesce(sum(i.units) FILTER (WHERE i.mode = 'reserve'), 0)::int4 AS wanted,
                   coalesce(sum(i.units) FILTER (WHERE i.mode = 'release'), 0)::int4 AS released,
                   floor(min(i.lim - coalesce(before.count, 0) * i.previous_weight))::int4 AS cap
            FROM input i
            LEFT JOIN rate_limit_counters before ON before.app_id = i.app_id AND before.policy = i.policy
                AND before.subject = i.subject AND before.window_start = i.window_start - i.period
            GROUP BY i.app_id, i.policy, i.subject, i.window_start
        ),
        written AS (
            INSERT INTO rate_limit_counters AS c (app_id, policy, subject, window_start, count, granted, expires_at)
            SELECT app_id, policy, subject, window_start, counted + least(wanted, greatest(cap - counted, 0)),
                   least(wanted, greatest(cap - counted, 0)), to_timestamp(window_start + 2 * period)
            FROM totals WHERE counted + wanted + released > 0
            ORDER BY app_id, policy, subject, window_start
            ON CONFLICT (app_id, policy, subject, window_start) DO UPDATE SET (count, granted) = (
                SELECT b.base + least(t.wanted, greatest(t.cap - b.base, 0)), least(t.wanted, greatest(t.cap - b.base, 0))
                FROM totals t, LATERAL (SELECT greatest(c.count - t.released, 0) + t.counted AS base) b
                WHERE t.app_id = excluded.app_id AND t.policy = excluded.policy
                    AND t.subject = excluded.subject AND t.window_start = excluded.window_start)
            RETURNING app_id, policy, subject, window_start, count, granted
        ),
        running AS (
            SELECT i.*,
                   count(*) FILTER (WHERE i.mode = 'count') OVER w AS counted_so_far,
                   coalesce(sum(i.units) FILTER (WHERE i.mode = 'reserve') OVER w, 0) AS reserved_so_far
            FROM input i
            WINDOW w AS (PARTITION BY i.app_id, i.policy, i.subject, i.window_start ORDER BY i.position)
        ),
        counted AS (
            SELECT r.position, r.request, r.mode, r.previous_weight, r.lim,
                   CASE WHEN r.mode = 'reserve'
                        THEN least(r.units, greatest(coalesce(w.granted, 0) - (r.reserved_so_far - r.units), 0))
                        ELSE 0 END::int8 AS units_granted,
                   (coalesce(w.count - w.granted - t.counted, stored.count, 0) + r.counted_so_far
                       + least(r.reserved_so_far, coalesce(w.granted, 0)))::int8 AS current,
                   coalesce(before.count, 0)::int8 AS previous
            FROM running r
            JOIN totals t USING (app_id, policy, subject, window_start)
            LEFT JOIN written w USING (app_id, policy, subject, window_start)
            LEFT JOIN rate_limit_counters stored ON w.count IS NULL AND stored.app_id = r.app_id
                AND stored.policy = r.policy AND stored.subject = r.subject AND stored.window_start = r.window_start
            LEFT JOIN rate_limit_counters before ON before.app_id = r.app_id AND before.policy = r.policy
                AND before.subject = r.subject AND before.window_start = r.window_start - r.period
        ),
        verdicts AS (
            SELECT position, request, current, previous, units_granted,
                   CASE mode
                       WHEN 'release' THEN true
                       WHEN 'reserve' THEN units_granted > 0
                       WHEN 'count' THEN previous::float8 * previous_weight + current::float8 <= lim
                       ELSE previous::float8 * previous_weight + current::float8 + 1 <= lim
                   END AS allowed
            FROM counted
        )
        """
}
