import Foundation
public import GatewayCore
public import Logging
public import PostgresNIO

/// The `user_changes` table (``UserChangeJournal``). A directory's write
/// journals its changes on its own connection (``insert(_:on:logger:)``,
/// through ``AuditedTransaction``), so they commit with it.
public struct PostgresUserChanges: UserChangeJournal {
    let client: PostgresClient
    let logger: Logger

    public init(client: PostgresClient, logger: Logger) {
        self.client = client
        self.logger = logger
    }

    public func record(_ changes: [UserChange]) async throws {
        guard !changes.isEmpty else { return }
        try await client.transaction(logger: logger) { connection in
            try await Self.insert(changes, on: connection, logger: logger)
        }
    }

    public func finish(_ change: UserChange) async throws {
        try await client.committedQuery("DELETE FROM user_changes WHERE change_id = \(change.id)", logger: logger)
    }

    public func claimUnfinished(olderThan age: Duration, limit: Int, lease: Duration) async throws -> [UserChange] {
        let rows = try await client.committedQuery(
            """
            UPDATE user_changes SET leased_until = now() + make_interval(secs => \(lease.inSeconds))
            WHERE change_id IN (
                SELECT change_id FROM user_changes
                WHERE recorded_at <= now() - make_interval(secs => \(age.inSeconds))
                  AND (leased_until IS NULL OR leased_until <= now())
                ORDER BY recorded_at LIMIT \(Int32(limit)) FOR UPDATE SKIP LOCKED)
            RETURNING change_id, app_id, user_id, kind, request_id, actor, keeping_session
            """, logger: logger)
        var changes: [UserChange] = []
        for (id, appID, userID, kind, requestID, actor, keeping) in try rows.decode(
            (UUID, UUID, String, String, String, UUID?, UUID?).self)
        {
            // A kind this release does not know (a newer replica's) is left for that replica.
            guard let kind = UserChange.Kind(rawValue: kind) else { continue }
            changes.append(
                UserChange(
                    kind, of: userID, in: AppID(uuid: appID), requestID: requestID, actor: actor, keepingSession: keeping, id: id))
        }
        return changes
    }

    /// Journals `changes` on `connection`, in the transaction it is in.
    public static func insert(_ changes: [UserChange], on connection: PostgresConnection, logger: Logger) async throws {
        for change in changes {
            try await connection.tracedQuery(
                """
                INSERT INTO user_changes (change_id, app_id, user_id, kind, request_id, actor, keeping_session)
                VALUES (\(change.id), \(change.appID.uuid), \(change.userID), \(change.kind.rawValue), \(change.requestID),
                        \(change.actor), \(change.keepingSession))
                ON CONFLICT (change_id) DO NOTHING
                """, logger: logger)
        }
    }
}
