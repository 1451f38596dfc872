import Foundation
import GatewayCore
import PostgresNIO

/// The one statement behind the token path's writes: touches rate-limit
/// counters and reads every touched counter back (``SlidingWindowSQL``, in
/// GatewayCore's `RateLimit/` beside the Swift it agrees with), changes
/// sessions (``SessionChangesSQL``), and inserts audit rows. Any list may be
/// empty. Prepared once per connection, so PostgreSQL plans it once rather
/// than on every batch (planning the counter part took longer than running it).
///
/// An audit row may name a request (`admittedBy`): it is inserted only if
/// every touch of that request is allowed, and, when it waits on a rotation
/// (`needsRotation`), only if that rotation was made. That is how an issued
/// token's row, its counters and its session take one statement.
///
/// A batch's first attempt runs it alone, in PostgreSQL's implicit
/// transaction, and it first takes its rows' ``RequestLocks`` itself (`locked`,
/// which the answer's first part and the audit insert wait on before they
/// read or write anything). Its retry form takes them beforehand, in a
/// transaction, since it must look for an earlier attempt's rows after them.
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

    /// The parameter holding the events' request ids (the tenth of their columns).
    static let requestIDs = "$\(SlidingWindowSQL.parameterCount + 10)"

    /// The twelve parameters holding the events' columns, from `$first`.
    static func eventArrays(from first: Int) -> String {
        let types = ["uuid"] + Array(repeating: "text", count: 11)
        return types.enumerated().map { "$\(first + $0.offset)::\($0.element)[]" }.joined(separator: ", ")
    }

    /// What the statement answers, a row each: kind, request, current,
    /// previous, allowed, granted. For each touch in order (kind 0, its place
    /// in the batch as request), its current and previous window counts,
    /// whether its verdict allows and the units a reservation was granted;
    /// then the requests whose rotation (kind 1) or revocation (kind 2) was made.
    typealias Row = (Int32, Int64, Int64, Int64, Bool, Int64)

    /// The prepared statement's name on each connection. Spelled out: the
    /// protocol's default builds it by reflection on every execution.
    static let name = "audit_and_counter_write"

    /// Parameters: the touches', the events' twelve columns, each event's
    /// request, whether it waits on a rotation and its write id, then the
    /// session changes'.
    static let eventParameterCount = 15

    static let sql = text(retrying: false)

    /// The statement; `retrying`, its form for a batch an earlier attempt at
    /// which may have committed: an audit row already written by that attempt
    /// (its request's row of the same event with the same write id, which
    /// the ledger makes for each queued item) is skipped, and so is a session
    /// already started. The write id, not the request id alone: a client's
    /// `x-request-id` is the request id, and two requests may send the same.
    static func text(retrying: Bool) -> String {
        // The first attempt's own request locks, and the condition that waits for them.
        let locks = retrying ? "" : "locked AS MATERIALIZED (SELECT count(*) AS n FROM (\(RequestLocks.taking(requestIDs))) AS l),\n"
        let afterLocks = retrying ? "" : "(SELECT n FROM locked) >= 0"
        return """
        WITH \(locks)\(SlidingWindowSQL.verdicts),
        \(SessionChangesSQL.expressions(from: SlidingWindowSQL.parameterCount + eventParameterCount + 1, retrying: retrying)),
        audit AS (
            INSERT INTO audit_events (\(eventColumns), write_id)
            SELECT \(eventValues), e.write_id
            FROM unnest(\(eventArrays(from: SlidingWindowSQL.parameterCount + 1)), $\(SlidingWindowSQL.parameterCount + 13)::int8[],
                        $\(SlidingWindowSQL.parameterCount + 14)::bool[], $\(SlidingWindowSQL.parameterCount + 15)::uuid[])
                AS e(\(eventColumns), admitted_by, needs_rotation, write_id)
            WHERE \(retrying ? "" : afterLocks + " AND ")(e.admitted_by = 0 OR e.admitted_by NOT IN (SELECT request FROM refused))
                AND (NOT e.needs_rotation OR e.admitted_by IN (SELECT request FROM rotated))
                \(retrying ? Self.notWrittenBefore : "")
        )
        SELECT 0::int4 AS kind, position AS request, current, previous, allowed, units_granted FROM verdicts
            \(retrying ? "" : "WHERE " + afterLocks)
        UNION ALL SELECT 1, request, 0, 0, true, 0 FROM rotated
        UNION ALL SELECT 2, request, 0, 0, true, 0 FROM revoked
        ORDER BY kind, request
        """
    }

    /// The retry form's test that an earlier attempt did not write the row:
    /// the request id finds the candidates (it is indexed), the write id
    /// says which is this item's.
    static let notWrittenBefore = """
        AND NOT EXISTS (SELECT 1 FROM audit_events a WHERE a.request_id = e.request_id AND a.event = e.event
                                                       AND a.write_id = e.write_id)
        """

    /// The statement in its retrying form (``text(retrying:)``), prepared apart.
    struct Retry: PostgresPreparedStatement {
        typealias Row = LedgerWriteStatement.Row
        static let name = "audit_and_counter_rewrite"
        static let sql = LedgerWriteStatement.text(retrying: true)

        let statement: LedgerWriteStatement

        init(_ statement: LedgerWriteStatement) { self.statement = statement }

        func makeBindings() throws -> PostgresBindings { try statement.makeBindings() }
        func decodeRow(_ row: PostgresRow) throws -> Row { try statement.decodeRow(row) }
    }

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

    /// An audit row, and the request whose touches must all allow it (0:
    /// written whatever they say), and whether it waits on that request's rotation.
    struct AuditRow {
        let event: AuditEvent
        let admittedBy: Int64
        var needsRotation = false
        /// The queued item's own id (``notWrittenBefore``).
        var writeID = UUID()
    }

    /// A session change, and the request it is of (its place in the batch, from 1).
    struct SessionRow {
        let change: SessionChange
        let request: Int64
    }

    var touches: [TouchRow] = []
    var rows: [AuditRow] = []
    var sessions: [SessionRow] = []

    init() {}

    /// A statement that only writes `event`.
    init(recording event: AuditEvent) {
        rows = [AuditRow(event: event, admittedBy: 0)]
    }

    func makeBindings() throws -> PostgresBindings {
        var bindings = PostgresBindings(
            capacity: SlidingWindowSQL.parameterCount + Self.eventParameterCount + SessionChangesSQL.rotationParameterCount
                + SessionChangesSQL.startParameterCount + SessionChangesSQL.revocationParameterCount)
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
        bindings.append(rows.map(\.needsRotation))
        bindings.append(rows.map(\.writeID))
        appendSessionChanges(to: &bindings)
        return bindings
    }

    /// The rotations', starts' and revocations' arrays, in ``SessionChangesSQL``'s order.
    private func appendSessionChanges(to bindings: inout PostgresBindings) {
        var rotations: [(SessionRotation, Int64)] = []
        var starts: [(SessionStart, Int64)] = []
        var revocations: [(AppID, UUID, String, Int64)] = []
        for row in sessions {
            switch row.change {
            case .rotate(let rotation): rotations.append((rotation, row.request))
            case .start(let start): starts.append((start, row.request))
            case .revoke(let appID, let sessionID, let reason): revocations.append((appID, sessionID, reason, row.request))
            }
        }
        bindings.append(rotations.map(\.0.appID.uuid))
        bindings.append(rotations.map(\.0.sessionID))
        bindings.append(rotations.map { Int64($0.0.generation) })
        bindings.append(rotations.map { ByteBuffer(bytes: $0.0.tokenDigest) })
        bindings.append(rotations.map { ByteBuffer(bytes: $0.0.successorDigest) })
        bindings.append(rotations.map { Int64($0.0.idleTimeoutSeconds) })
        bindings.append(rotations.map(\.1))
        bindings.append(starts.map(\.0.appID.uuid))
        bindings.append(starts.map(\.0.sessionID))
        bindings.append(starts.map(\.0.userID))
        bindings.append(starts.map { ProfileJSON.text($0.0.profile) })
        bindings.append(starts.map(\.0.credentialType))
        bindings.append(starts.map { $0.0.methods.joined(separator: " ") })
        bindings.append(starts.map { $0.0.deviceLabel ?? "" })
        bindings.append(starts.map { ByteBuffer(bytes: $0.0.tokenDigest) })
        bindings.append(starts.map { Int64($0.0.idleTimeoutSeconds) })
        bindings.append(starts.map { Int64($0.0.lifetimeSeconds) })
        bindings.append(starts.map { Int64($0.0.maximumPerUser) })
        bindings.append(starts.map(\.1))
        bindings.append(revocations.map(\.0.uuid))
        bindings.append(revocations.map(\.1))
        bindings.append(revocations.map(\.2))
        bindings.append(revocations.map(\.3))
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
