public import GatewayCore
public import Logging
public import PostgresNIO

/// Runs an admin change and its audit row in one transaction: both commit
/// or neither does.
public struct AuditedTransaction: Sendable {
    private let client: PostgresClient
    private let auditLog: PostgresAuditLog
    private let logger: Logger

    public init(client: PostgresClient, logger: Logger) {
        self.client = client
        self.auditLog = PostgresAuditLog(client: client, logger: logger)
        self.logger = logger
    }

    /// Runs `change`, then records `event` when `change` returns `true`.
    public func run<Result: Sendable>(
        recording event: AuditEvent,
        when shouldRecord: @escaping @Sendable (Result) -> Bool = { _ in true },
        _ change: @Sendable (PostgresConnection) async throws -> Result
    ) async throws -> Result {
        try await run(change, recording: { shouldRecord($0) ? event : nil })
    }

    /// Runs `change`, then records the event `describe` makes of its result, if any.
    public func run<Result: Sendable>(
        _ change: @Sendable (PostgresConnection) async throws -> Result,
        recording describe: @Sendable (Result) -> AuditEvent?
    ) async throws -> Result {
        try await client.transaction(logger: logger) { connection in
            let result = try await change(connection)
            if let event = describe(result) {
                try await auditLog.record(event, on: connection)
            }
            return result
        }
    }
}
