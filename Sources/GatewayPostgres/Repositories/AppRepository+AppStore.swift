public import GatewayCore
public import PostgresNIO

extension AppRepository: AppStore {
    public func create(_ app: AppSettings, recording event: AuditEvent) async throws -> Bool {
        try await AuditedTransaction(client: client, logger: logger).run(recording: event, when: { $0 }) {
            try await insert(app, on: $0)
        }
    }

    public func update(
        _ appID: AppID, recording event: AuditEvent, _ change: @escaping @Sendable (StoredApp) throws -> AppSettings
    ) async throws -> StoredApp? {
        try await AuditedTransaction(client: client, logger: logger).run(recording: event, when: { $0 != nil }) { connection in
            try await update(appID, on: connection, change)
        }
    }

    /// ``update(_:recording:_:)`` inside the caller's transaction, without an audit row.
    public func update(
        _ appID: AppID, on connection: PostgresConnection, _ change: @Sendable (StoredApp) throws -> AppSettings
    ) async throws -> StoredApp? {
        guard let current = try await find(appID, lockingOn: connection) else { return nil }
        let settings = try change(current)
        precondition(settings.appID == appID, "an app's change keeps its id")
        guard try await update(settings, on: connection) else { return nil }
        return try await find(appID, lockingOn: connection)
    }

    public func delete(_ appID: AppID, recording event: AuditEvent) async throws -> Bool {
        try await AuditedTransaction(client: client, logger: logger).run(recording: event, when: { $0 }) {
            try await delete(appID, on: $0)
        }
    }
}
