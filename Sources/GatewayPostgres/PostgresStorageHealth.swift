public import GatewayCore
public import Logging
public import PostgresNIO

/// ``StorageHealth`` of the PostgreSQL the gateway writes to.
public struct PostgresStorageHealth: StorageHealth {
    private let client: PostgresClient
    private let writer: GroupCommitWriter
    private let logger: Logger

    public init(client: PostgresClient, writer: GroupCommitWriter, logger: Logger) {
        self.client = client
        self.writer = writer
        self.logger = logger
    }

    public func ping() async throws {
        _ = try await client.query("SELECT 1", logger: logger)
    }

    public var keptAuditRows: (oldestAge: Duration, count: Int)? {
        writer.oldestKeptRowAge.map { ($0, writer.keptCount) }
    }
}
