public import GatewayCore
public import Logging
public import PostgresNIO

/// ``StorageHealth`` of the PostgreSQL the gateway writes to.
public struct PostgresStorageHealth: StorageHealth {
    private let client: PostgresClient
    private let ledger: PostgresRequestLedger
    private let logger: Logger

    public init(client: PostgresClient, ledger: PostgresRequestLedger, logger: Logger) {
        self.client = client
        self.ledger = ledger
        self.logger = logger
    }

    public func ping() async throws {
        _ = try await client.tracedQuery("SELECT 1", logger: logger)
    }

    public var keptAuditRows: (oldestAge: Duration, count: Int)? {
        ledger.oldestKeptRowAge.map { ($0, ledger.keptCount) }
    }
}
