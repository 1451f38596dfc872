import Foundation
public import GatewayCore
import GatewayPostgres
public import Logging
import NIOCore
public import PostgresNIO

/// The `outbox` table (Migrations/0016_outbox.sql).
public struct PostgresOutbox: OutboxStore {
    let client: PostgresClient
    let logger: Logger

    public init(client: PostgresClient, logger: Logger) {
        self.client = client
        self.logger = logger
    }

    public func queue(_ message: OutboxMessage, in appID: AppID, lifetimeSeconds: Int) async throws {
        try await client.committedQuery(
            """
            INSERT INTO outbox (app_id, message_id, channel, payload, request_id, user_id, expires_at)
            VALUES (\(appID.uuid), \(message.id), \(message.channel), \(ByteBuffer(bytes: message.payload)),
                    \(message.requestID), \(message.userID), now() + make_interval(secs => \(lifetimeSeconds)))
            """, logger: logger)
    }

    /// One statement: the due rows are locked with `SKIP LOCKED`, so two
    /// workers asking at once take different messages, and leased in the
    /// same commit, so that neither lock nor connection is held while the
    /// message travels.
    public func claim(channel: String, limit: Int, lease: Duration) async throws -> [ClaimedMessage] {
        let leaseSeconds = lease.inSeconds
        let rows = try await client.committedQuery(
            """
            UPDATE outbox o SET leased_until = now() + make_interval(secs => \(leaseSeconds)), attempts = o.attempts + 1
            FROM (
                SELECT app_id, message_id FROM outbox
                WHERE channel = \(channel) AND state = 'queued' AND next_attempt_at <= now()
                  AND (leased_until IS NULL OR leased_until <= now())
                ORDER BY next_attempt_at LIMIT \(limit)
                FOR UPDATE SKIP LOCKED
            ) due
            WHERE o.app_id = due.app_id AND o.message_id = due.message_id
            RETURNING o.app_id, o.message_id, o.payload, o.request_id, o.attempts, o.expires_at <= now()
            """, logger: logger)
        var claimed: [ClaimedMessage] = []
        for (appID, id, payload, requestID, attempts, expired) in try rows.decode((UUID, UUID, ByteBuffer?, String, Int, Bool).self) {
            claimed.append(
                ClaimedMessage(
                    appID: AppID(uuid: appID), id: id, payload: payload.map { Array(buffer: $0) } ?? [], requestID: requestID,
                    attempt: attempts,
                    hasExpired: expired))
        }
        return claimed
    }

    /// One transaction, one commit, for the whole batch: a commit each was
    /// most of a delivery's database cost.
    public func finish(_ ends: [OutboxAttemptEnd]) async throws -> [Bool] {
        guard !ends.isEmpty else { return [] }
        let (logger, auditLog) = (logger, PostgresAuditLog(client: client, logger: logger))
        return try await client.transaction(logger: logger) { connection in
            var finished: [Bool] = []
            for end in ends {
                let done = try await Self.finish(end.message, end.finish, on: connection, logger: logger)
                if done { try await auditLog.record(end.row, on: connection) }
                finished.append(done)
            }
            return finished
        }
    }

    private static func finish(
        _ message: ClaimedMessage, _ finish: OutboxFinish, on connection: PostgresConnection, logger: Logger
    ) async throws -> Bool {
        let (appID, id, attempt) = (message.appID.uuid, message.id, message.attempt)
        let rows: [PostgresRow]
        switch finish {
        case .delivered(let reply), .failed(let reply):
            let state = finish == .delivered(reply: reply) ? "delivered" : "failed"
            rows = try await connection.tracedQuery(
                """
                UPDATE outbox SET state = \(state), payload = NULL, leased_until = NULL, finished_at = now(),
                    last_reply = \(Self.cut(reply))
                WHERE app_id = \(appID) AND message_id = \(id) AND attempts = \(attempt) AND state = 'queued'
                RETURNING 1
                """, logger: logger)
        case .retry(let pause, let reply):
            let seconds = pause.inSeconds
            rows = try await connection.tracedQuery(
                """
                UPDATE outbox SET leased_until = NULL, next_attempt_at = now() + make_interval(secs => \(seconds)),
                    last_reply = \(Self.cut(reply))
                WHERE app_id = \(appID) AND message_id = \(id) AND attempts = \(attempt) AND state = 'queued'
                RETURNING 1
                """, logger: logger)
        }
        return !rows.isEmpty
    }

    public func cancel(for userID: String, in appID: AppID, recording event: AuditEvent) async throws -> Int {
        let logger = logger
        return try await AuditedTransaction(client: client, logger: logger).run(recording: event, when: { $0 > 0 }) { connection in
            let rows = try await connection.tracedQuery(
                """
                UPDATE outbox SET state = 'failed', payload = NULL, finished_at = now(), last_reply = \(event.event)
                WHERE app_id = \(appID.uuid) AND user_id = \(userID) AND state = 'queued'
                  AND (leased_until IS NULL OR leased_until <= now())
                RETURNING 1
                """, logger: logger)
            return rows.count
        }
    }

    /// A reply as the column keeps it: at most 512 bytes, cut on a character.
    static func cut(_ reply: String) -> String {
        var text = reply
        while text.utf8.count > 512 { text.removeLast() }
        return text
    }
}
