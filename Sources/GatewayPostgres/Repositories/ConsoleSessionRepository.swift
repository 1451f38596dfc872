public import Foundation
public import GatewayCore
public import Logging
public import PostgresNIO

/// The `console_sessions` table.
public struct ConsoleSessionRepository: ConsoleSessionStore {
    let client: PostgresClient
    let logger: Logger

    public init(client: PostgresClient, logger: Logger) {
        self.client = client
        self.logger = logger
    }

    public func open(_ session: ConsoleSessionRecord) async throws {
        try await client.tracedQuery("DELETE FROM console_sessions WHERE expires_at < now()", logger: logger)
        try await client.committedQuery(
            """
            INSERT INTO console_sessions (session_hash, sealed_token, expires_at, ends_at)
            VALUES (\(ByteBuffer(bytes: session.digest)), \(ByteBuffer(bytes: session.sealedToken)),
                    \(session.expiresAt), \(session.endsAt))
            """, logger: logger)
    }

    public func resume(digest: Data, idle: Duration) async throws -> Data? {
        let rows = try await client.tracedQuery(
            """
            UPDATE console_sessions
            SET expires_at = least(now() + \(idle.inSeconds) * interval '1 second', ends_at)
            WHERE session_hash = \(ByteBuffer(bytes: digest)) AND expires_at > now()
            RETURNING sealed_token
            """, logger: logger)
        for sealed in try rows.decode(ByteBuffer.self) { return Data(sealed.readableBytesView) }
        return nil
    }

    public func close(digest: Data) async throws {
        // Committed before the operator is told they signed out.
        try await client.committedQuery(
            "DELETE FROM console_sessions WHERE session_hash = \(ByteBuffer(bytes: digest))", logger: logger)
    }
}
