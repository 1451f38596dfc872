public import GatewayCore

extension AppKeyRepository: KeyStore {
    public func add(
        to appID: AppID, _ seal: @Sendable (KeyStatus) throws -> StoredKey,
        recording describe: @Sendable (StoredKey) -> AuditEvent
    ) async throws -> KeyAddition {
        try await AuditedTransaction(client: client, logger: logger).run({ connection in
            guard let keySet = try await lockKeySet(of: appID, on: connection) else { return .appNotFound }
            guard keySet.count < StoredKey.maximumPerApp else { return .full }
            let key = try seal(keySet.hasActive ? .next : .active)
            try await insert(key, on: connection)
            return .added(key)
        }, recording: { addition in
            guard case .added(let key) = addition else { return nil }
            return describe(key)
        })
    }

    public func activate(_ keyID: KeyID, of appID: AppID, recording event: AuditEvent) async throws -> Bool {
        try await AuditedTransaction(client: client, logger: logger).run(recording: event, when: { $0 }) {
            try await activate(keyID, of: appID, on: $0)
        }
    }

    public func delete(_ keyID: KeyID, of appID: AppID, recording event: AuditEvent) async throws -> KeyDeletion {
        try await AuditedTransaction(client: client, logger: logger).run(recording: event, when: { $0 == .deleted }) {
            try await delete(keyID, of: appID, on: $0)
        }
    }
}
