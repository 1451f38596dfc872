public import GatewayCore
public import Logging
public import PostgresNIO

/// Runs an admin change, its audit row and the user changes it makes in one
/// transaction: all commit or none does.
public struct AuditedTransaction: Sendable {
    private let client: PostgresClient
    private let auditLog: PostgresAuditLog
    private let logger: Logger

    public init(client: PostgresClient, logger: Logger) {
        self.client = client
        self.auditLog = PostgresAuditLog(client: client, logger: logger)
        self.logger = logger
    }

    /// Runs `change`, then records `event` and journals `userChanges` when `change` returns `true`.
    public func run<Result: Sendable>(
        recording event: AuditEvent, journaling userChanges: [UserChange] = [],
        when shouldRecord: @escaping @Sendable (Result) -> Bool = { _ in true },
        _ change: @Sendable (PostgresConnection) async throws -> Result
    ) async throws -> Result {
        try await run(
            change, recording: { shouldRecord($0) ? event : nil }, journaling: { shouldRecord($0) ? userChanges : [] })
    }

    /// Runs `change`, then records the event `describe` makes of its result,
    /// if any, and journals the user changes `userChanges` makes of it
    /// (``PostgresUserChanges``): what the user's holders must hear commits
    /// with the change.
    public func run<Result: Sendable>(
        _ change: @Sendable (PostgresConnection) async throws -> Result,
        recording describe: @Sendable (Result) -> AuditEvent?,
        journaling userChanges: @Sendable (Result) -> [UserChange] = { _ in [] }
    ) async throws -> Result {
        try await client.transaction(logger: logger) { connection in
            let result = try await change(connection)
            if let event = describe(result) {
                try await auditLog.record(event, on: connection)
            }
            try await PostgresUserChanges.insert(userChanges(result), on: connection, logger: logger)
            return result
        }
    }
}
