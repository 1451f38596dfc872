import Foundation
import GatewayCore
import PostgresNIO

/// The one statement behind the token path's writes: touches rate-limit
/// counters and reads every touched counter back, and inserts audit rows.
/// Either list may be empty. Prepared once per connection, so PostgreSQL
/// plans it once rather than on every batch (planning the counter part took
/// longer than running it).
///
/// A touch counts (+1 whatever the verdict), reserves (+1 only while the
/// limit has room: the add and its test happen under the counter row's lock,
/// so any number of statements on any number of gateways grant at most the
/// limit), releases (−1, never below 0) or only reads. Within a batch,
/// releases come first, then touches in their order, so touches batched
/// together read as if their requests had run one after another.
///
/// Each touch also gets its verdict: a reservation is allowed when it was
/// granted, a count when previous × weight + current is at most the limit, a
/// read when one more would be, a release always: what `SlidingWindow.touch`
/// says in Swift, which `RateLimitAgreementTests` checks this against, by a
/// table and by random sequences. An audit row may name a
/// request (`admittedBy`): it is inserted only if every touch of that request
/// is allowed. That is how an issued token's row and its counters take one
/// statement.
struct LedgerWriteStatement: PostgresPreparedStatement {
    /// The audit columns, in the order of ``appendEventColumns(_:to:)``.
    static let eventColumns =
        "app_id, event, outcome, reason, user_id, credential_type, key_id, client_ip, user_agent, request_id, actor, detail"

    /// Those columns' values from arrays unnested as `e` (NULLs travel as empty strings).
    static let eventValues = """
        e.app_id, e.event, e.outcome, nullif(e.reason, ''), nullif(e.user_id, ''), nullif(e.credential_type, ''),
        nullif(e.key_id, '')::uuid, nullif(e.client_ip, '')::inet, nullif(e.user_agent, ''), e.request_id,
        nullif(e.actor, '')::uuid, e.detail::jsonb
        """

    /// The twelve parameters holding the events' columns, from `$first`.
    static func eventArrays(from first: Int) -> String {
        let types = ["uuid"] + Array(repeating: "text", count: 11)
        return types.enumerated().map { "$\(first + $0.offset)::\($0.element)[]" }.joined(separator: ", ")
    }

    /// A touch's current and previous window counts, and whether its verdict allows.
    typealias Row = (Int64, Int64, Bool)

    /// The prepared statement's name on each connection. Spelled out: the
    /// protocol's default builds it by reflection on every execution.
    static let name = "audit_and_counter_write"

    static let sql = """
        WITH input AS (
            SELECT * FROM unnest($1::uuid[], $2::text[], $3::text[], $4::int8[], $5::int8[], $6::text[], $7::int8[],
                                 $8::float8[], $9::float8[])
                WITH ORDINALITY AS i(app_id, policy, subject, window_start, period, mode, request,
                                     previous_weight, lim, position)
        ),
        totals AS (
            SELECT i.app_id, i.policy, i.subject, i.window_start, max(i.period) AS period,
                   (count(*) FILTER (WHERE i.mode = 'count'))::int4 AS counted,
                   (count(*) FILTER (WHERE i.mode = 'reserve'))::int4 AS wanted,
                   (count(*) FILTER (WHERE i.mode = 'release'))::int4 AS released,
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
                   count(*) FILTER (WHERE i.mode = 'reserve') OVER w AS reserved_so_far
            FROM input i
            WINDOW w AS (PARTITION BY i.app_id, i.policy, i.subject, i.window_start ORDER BY i.position)
        ),
        counted AS (
            SELECT r.position, r.request, r.mode, r.previous_weight, r.lim, r.reserved_so_far,
                   coalesce(w.granted, 0) AS granted,
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
            SELECT position, request, current, previous,
                   CASE mode
                       WHEN 'release' THEN true
                       WHEN 'reserve' THEN reserved_so_far <= granted
                       WHEN 'count' THEN previous::float8 * previous_weight + current::float8 <= lim
                       ELSE previous::float8 * previous_weight + current::float8 + 1 <= lim
                   END AS allowed
            FROM counted
        ),
        audit AS (
            INSERT INTO audit_events (\(eventColumns))
            SELECT \(eventValues)
            FROM unnest(\(eventArrays(from: 10)), $22::int8[]) AS e(\(eventColumns), admitted_by)
            WHERE e.admitted_by = 0
                OR NOT EXISTS (SELECT 1 FROM verdicts v WHERE v.request = e.admitted_by AND NOT v.allowed)
        )
        SELECT current, previous, allowed FROM verdicts ORDER BY position
        """

    /// One counter touch (see ``GatewayCore/CounterTouch``), with what its verdict needs.
    struct TouchRow {
        let appID: AppID
        let policy: String
        let subject: String
        let windowStart: Int64
        let periodSeconds: Int64
        let mode: CounterTouch.Mode
        /// The request this touch decides for: its place in the batch, from 1.
        let request: Int64
        let previousWeight: Double
        let limit: Double
    }

    /// An audit row, and the request whose touches must all allow it (0: written whatever they say).
    struct AuditRow {
        let event: AuditEvent
        let admittedBy: Int64
    }

    var touches: [TouchRow] = []
    var rows: [AuditRow] = []

    init() {}

    /// A statement that only writes `event`.
    init(recording event: AuditEvent) {
        rows = [AuditRow(event: event, admittedBy: 0)]
    }

    func makeBindings() throws -> PostgresBindings {
        var bindings = PostgresBindings(capacity: 22)
        bindings.append(touches.map(\.appID.uuid))
        bindings.append(touches.map(\.policy))
        bindings.append(touches.map(\.subject))
        bindings.append(touches.map(\.windowStart))
        bindings.append(touches.map(\.periodSeconds))
        bindings.append(touches.map(\.mode.rawValue))
        bindings.append(touches.map(\.request))
        bindings.append(touches.map(\.previousWeight))
        bindings.append(touches.map(\.limit))
        Self.appendEventColumns(rows.map(\.event), to: &bindings)
        bindings.append(rows.map(\.admittedBy))
        return bindings
    }

    /// The events' twelve columns, app to detail, each as one array.
    static func appendEventColumns(_ events: [AuditEvent], to bindings: inout PostgresBindings) {
        // NULLs travel as empty strings: none of these columns holds a meaningful empty value.
        func text(_ value: String?) -> String { value ?? "" }
        bindings.append(events.map { $0.appID?.uuid ?? AuditEvent.noApp })
        bindings.append(events.map(\.event))
        bindings.append(events.map(\.outcome.rawValue))
        bindings.append(events.map { text($0.reason) })
        bindings.append(events.map { text($0.userID) })
        bindings.append(events.map { text($0.credentialType) })
        bindings.append(events.map { text($0.keyID.map { $0.uuid.lowercasedText }) })
        bindings.append(events.map { text($0.clientIP) })
        bindings.append(events.map { text($0.userAgent) })
        bindings.append(events.map(\.requestID))
        bindings.append(events.map { text($0.actor?.lowercasedText) })
        bindings.append(events.map { Self.detailJSON($0.detail) })
    }

    func decodeRow(_ row: PostgresRow) throws -> Row {
        try row.decode(Row.self)
    }

    /// The detail as a JSON object with sorted keys.
    static func detailJSON(_ detail: [String: String]) -> String {
        guard !detail.isEmpty else { return "{}" }
        var writer = JSONObjectWriter(reservingCapacity: 64)
        for key in detail.keys.sorted() { writer.add(key, detail[key]!) }
        return String(decoding: writer.finish(), as: UTF8.self)
    }
}
