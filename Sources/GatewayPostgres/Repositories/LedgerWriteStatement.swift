import Foundation
import GatewayCore
import PostgresNIO

/// The one statement behind the token path's writes: touches rate-limit
/// counters and reads every touched counter back (``SlidingWindowSQL``, in
/// GatewayCore's `RateLimit/` beside the Swift it agrees with), and inserts
/// audit rows. Either list may be empty. Prepared once per connection, so
/// PostgreSQL plans it once rather than on every batch (planning the counter
/// part took longer than running it).
///
/// An audit row may name a request (`admittedBy`): it is inserted only if
/// every touch of that request is allowed. That is how an issued token's row
/// and its counters take one statement.
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

    /// A touch's current and previous window counts, whether its verdict
    /// allows, and the units a reservation was granted.
    typealias Row = (Int64, Int64, Bool, Int64)

    /// The prepared statement's name on each connection. Spelled out: the
    /// protocol's default builds it by reflection on every execution.
    static let name = "audit_and_counter_write"

    static let sql = """
        WITH \(SlidingWindowSQL.verdicts),
        audit AS (
            INSERT INTO audit_events (\(eventColumns))
            SELECT \(eventValues)
            FROM unnest(\(eventArrays(from: SlidingWindowSQL.parameterCount + 1)), $\(SlidingWindowSQL.parameterCount + 13)::int8[])
                AS e(\(eventColumns), admitted_by)
            WHERE e.admitted_by = 0
                OR NOT EXISTS (SELECT 1 FROM verdicts v WHERE v.request = e.admitted_by AND NOT v.allowed)
        )
        SELECT current, previous, allowed, units_granted FROM verdicts ORDER BY position
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
        let units: Int32
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
        var bindings = PostgresBindings(capacity: SlidingWindowSQL.parameterCount + 13)
        bindings.append(touches.map(\.appID.uuid))
        bindings.append(touches.map(\.policy))
        bindings.append(touches.map(\.subject))
        bindings.append(touches.map(\.windowStart))
        bindings.append(touches.map(\.periodSeconds))
        bindings.append(touches.map(\.mode.rawValue))
        bindings.append(touches.map(\.request))
        bindings.append(touches.map(\.previousWeight))
        bindings.append(touches.map(\.limit))
        bindings.append(touches.map(\.units))
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
