public import Foundation
public import GatewayCore

extension AdminTokenRepository: AdminTokenStore {
    public func create(_ record: AdminTokenRecord, secret: AdminTokenSecret, recording event: AuditEvent) async throws {
        try await AuditedTransaction(client: client, logger: logger).run(recording: event) {
            try await insert(record, secret: secret, on: $0)
        }
    }

    public func revoke(_ id: UUID, recording event: AuditEvent) async throws -> Bool {
        try await AuditedTransaction(client: client, logger: logger).run(recording: event, when: { $0 }) {
            try await revoke(id, on: $0)
        }
    }
}
