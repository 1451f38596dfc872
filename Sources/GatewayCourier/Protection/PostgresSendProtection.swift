public import Foundation
public import GatewayCore
import GatewayPostgres
import NIOCore
public import Logging
public import PostgresNIO

/// Send protection's state in PostgreSQL (`send_breakers`, `human_check_tokens`).
/// A trip and a claim are each one statement under the row's lock, so any
/// number of replicas trip a prefix once and take a token once.
public struct PostgresSendProtection: SendProtectionStore {
    let client: PostgresClient
    let logger: Logger

    public init(client: PostgresClient, logger: Logger) {
        self.client = client
        self.logger = logger
    }

    private static let columns = "channel, prefix, tripped_at, open_until, threshold, released_at, released_by"

    public func openTrip(of prefix: String, channel: String, in appID: AppID, now: Date) async throws -> BreakerTrip? {
        let rows = try await client.tracedQuery(
            """
            SELECT \(unescaped: Self.columns) FROM send_breakers
            WHERE app_id = \(appID.uuid) AND channel = \(channel) AND prefix = \(prefix) AND open_until > \(now)
            """, logger: logger)
        for row in try rows.decode((String, String, Date, Date, Int, Date?, String?).self) { return Self.trip(row) }
        return nil
    }

    public func trip(
        _ prefix: String, channel: String, in appID: AppID, threshold: Int, until: Date, grace: Int, now: Date,
        recording event: AuditEvent
    ) async throws -> TripOutcome {
        // One statement under the row's lock: the breaker is opened where it is closed and no release is
        // recent, and otherwise left as it is; `trip_id` tells this statement's trip from another's.
        let id = UUID()
        let closed = "b.open_until <= excluded.tripped_at AND (b.released_at IS NULL OR b.released_at + make_interval(secs => excluded.grace) <= excluded.tripped_at)"
        return try await AuditedTransaction(client: client, logger: logger).run({ connection in
            let rows = try await connection.tracedQuery(
                """
                INSERT INTO send_breakers AS b (app_id, channel, prefix, trip_id, tripped_at, open_until, threshold, grace)
                VALUES (\(appID.uuid), \(channel), \(prefix), \(id), \(now), \(until), \(threshold), \(grace))
                ON CONFLICT (app_id, channel, prefix) DO UPDATE SET
                    trip_id = CASE WHEN \(unescaped: closed) THEN excluded.trip_id ELSE b.trip_id END,
                    tripped_at = CASE WHEN \(unescaped: closed) THEN excluded.tripped_at ELSE b.tripped_at END,
                    open_until = CASE WHEN \(unescaped: closed) THEN excluded.open_until ELSE b.open_until END,
                    threshold = CASE WHEN \(unescaped: closed) THEN excluded.threshold ELSE b.threshold END,
                    released_by = CASE WHEN \(unescaped: closed) THEN NULL ELSE b.released_by END,
                    released_at = CASE WHEN \(unescaped: closed) THEN NULL ELSE b.released_at END,
                    grace = excluded.grace
                RETURNING trip_id = \(id), open_until > \(now)
                """, logger: logger)
            for (made, open) in try rows.decode((Bool, Bool).self) {
                if made { return TripOutcome.tripped }
                return open ? .alreadyOpen : .released
            }
            return .alreadyOpen
        }, recording: { $0 == .tripped ? event : nil })
    }

    public func release(
        _ prefix: String, channel: String, in appID: AppID, by actor: String, now: Date, recording event: AuditEvent
    ) async throws -> Bool {
        try await AuditedTransaction(client: client, logger: logger).run(recording: event, when: { $0 }) { connection in
            let rows = try await connection.tracedQuery(
                """
                UPDATE send_breakers SET open_until = \(now), released_at = \(now), released_by = \(actor)
                WHERE app_id = \(appID.uuid) AND channel = \(channel) AND prefix = \(prefix) AND open_until > \(now)
                RETURNING 1
                """, logger: logger)
            return !rows.isEmpty
        }
    }

    public func trips(in appID: AppID) async throws -> [BreakerTrip] {
        let rows = try await client.tracedQuery(
            """
            SELECT \(unescaped: Self.columns) FROM send_breakers WHERE app_id = \(appID.uuid)
            ORDER BY tripped_at DESC LIMIT 500
            """, logger: logger)
        var trips: [BreakerTrip] = []
        for row in try rows.decode((String, String, Date, Date, Int, Date?, String?).self) { trips.append(Self.trip(row)) }
        return trips
    }

    public func claimToken(_ hash: [UInt8], in appID: AppID, until expiresAt: Date) async throws -> Bool {
        let rows = try await client.tracedQuery(
            """
            INSERT INTO human_check_tokens (app_id, token_hash, expires_at) VALUES (\(appID.uuid), \(ByteBuffer(bytes: hash)), \(expiresAt))
            ON CONFLICT (app_id, token_hash) DO UPDATE SET expires_at = excluded.expires_at
                WHERE human_check_tokens.expires_at < now()
            RETURNING 1
            """, logger: logger)
        return !rows.isEmpty
    }

    private static func trip(_ row: (String, String, Date, Date, Int, Date?, String?)) -> BreakerTrip {
        BreakerTrip(
            channel: row.0, prefix: row.1, trippedAt: row.2, openUntil: row.3, threshold: row.4, releasedAt: row.5,
            releasedBy: row.6)
    }
}
