public import Foundation
public import GatewayCore
public import Logging
public import PostgresNIO

/// Reads the audit trail, newest first, with keyset pagination on
/// (occurred_at, id) so pages stay stable while new rows arrive.
public struct AuditEventRepository: AuditTrail {
    private let client: PostgresClient
    private let logger: Logger

    public init(client: PostgresClient, logger: Logger) {
        self.client = client
        self.logger = logger
    }

    public func tokenCountsPerMinute(appID: AppID?, from: Date, to: Date) async throws -> [AuditMinuteCount] {
        let rows = try await client.tracedQuery(
            """
            SELECT date_trunc('minute', occurred_at), event = 'token.issued', reason, count(*)::int8
            FROM audit_events
            WHERE (\(appID?.uuid)::uuid IS NULL OR app_id = \(appID?.uuid))
              AND occurred_at >= \(from) AND occurred_at < \(to)
              AND event IN ('token.issued', 'token.denied')
            GROUP BY 1, 2, 3
            ORDER BY 1, 2, 3
            """, logger: logger)
        var counts: [AuditMinuteCount] = []
        for (minute, issued, reason, count) in try rows.decode((Date, Bool, String?, Int64).self) {
            counts.append(AuditMinuteCount(minute: minute, issued: issued, reason: issued ? nil : reason, count: Int(count)))
        }
        return counts
    }

    /// At most `limit` matching rows, newest first, after `position` when given.
    public func page(
        _ filter: AuditFilter, after position: StoredAuditEvent.Position?, limit: Int
    ) async throws -> [StoredAuditEvent] {
        let rows = try await client.tracedQuery(
            """
            SELECT (extract(epoch FROM occurred_at) * 1000000)::int8, id, occurred_at, app_id, event, outcome, reason,
                   user_id, credential_type, key_id, host(client_ip), user_agent, request_id, actor, detail::text
            FROM audit_events
            WHERE (\(filter.appID?.uuid)::uuid IS NULL OR app_id = \(filter.appID?.uuid))
              AND (\(filter.from)::timestamptz IS NULL OR occurred_at >= \(filter.from))
              AND (\(filter.to)::timestamptz IS NULL OR occurred_at < \(filter.to))
              AND (\(filter.event)::text IS NULL OR event = \(filter.event))
              AND (\(filter.outcome)::text IS NULL OR outcome = \(filter.outcome))
              AND (\(filter.reason)::text IS NULL OR reason = \(filter.reason))
              AND (\(filter.userID)::text IS NULL OR user_id = \(filter.userID))
              AND (\(filter.requestID)::text IS NULL OR request_id = \(filter.requestID))
              AND (\(position?.micros)::int8 IS NULL
                   OR (occurred_at, id) < ('epoch'::timestamptz + \(position?.micros) * interval '1 microsecond', \(position?.id)))
            ORDER BY occurred_at DESC, id DESC
            LIMIT \(Int64(limit))
            """, logger: logger)
        return try rows.decode(
            (Int64, Int64, Date, UUID, String, String, String?, String?, String?, UUID?, String?, String?, String, UUID?, String).self
        ).map { row in
            StoredAuditEvent(
                position: .init(micros: row.0, id: row.1), occurredAt: row.2, appID: row.3, event: row.4,
                outcome: row.5, reason: row.6, userID: row.7, credentialType: row.8, keyID: row.9, clientIP: row.10,
                userAgent: row.11, requestID: row.12, actor: row.13, detail: row.14)
        }
    }
}
