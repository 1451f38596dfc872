public import GatewayCore

extension AppRepository: AppStore {
    public func create(_ app: AppSettings, recording event: AuditEvent) async throws -> Bool {
        try await AuditedTransaction(client: client, logger: logger).run(recording: event, when: { $0 }) {
            try await insert(app, on: $0)
        }
    }

    public func update(_ app: AppSettings, recording event: AuditEvent) async throws -> Bool {
        try await AuditedTransaction(client: client, logger: logger).run(recording: event, when: { $0 }) {
            try await update(app, on: $0)
        }
    }

    public func delete(_ appID: AppID, recording event: AuditEvent) async throws -> Bool {
        try await AuditedTransaction(client: client, logger: logger).run(recording: event, when: { $0 }) {
            try await delete(appID, on: $0)
        }
    }
}
