import Foundation
@testable import GatewayCore
@testable import GatewayHTTP
import GatewayPluginKit
import GatewayRuntime
import PasswordPlugin
import PhoneCodePlugin
import StaticUsersPlugin
import Logging

/// App settings and every plugin's options, as `POST /admin/v1/apps` and
/// `PATCH /admin/v1/apps/{id}` read them (the first byte chooses): every
/// refusal is a 400 naming a field, never a 500 or a crash.
enum AppSettingsTarget {
    static let input: AppSettingsInput = {
        let masterKey = try! MasterKey(base64: MasterKey.generateBase64())
        return AppSettingsInput(
            plugins: PluginRegistry([
                StaticUsersPlugin(), PasswordPlugin(),
                PhoneCodePlugin(codeKey: masterKey.derivedSecret(for: PhoneCodePlugin.keyPurpose)),
            ]),
            // The settings checks read no table: plugins build their verifiers in memory.
            pluginServices: PluginServices(
                storage: .memory(PluginMemory { _ in }), apps: NoApps(), sessions: NoSessions(),
                userChanges: MemoryUserChanges(), logger: Logger(label: "fuzz")),
            rateLimits: RateLimitSettings(), masterKey: masterKey)
    }()

    static let current: AppSettings = {
        let body = #"""
            {"app_id": "6f1e1c3e-4b0a-4c57-9d2f-2b1f3f9f0a11", "name": "Fuzz", "environment": "development",
             "provider_id": "0b8f6f52-8a55-4f3a-a6a5-1c1a4cf0b6a2", "credential_types": ["static", "password", "phone_code"],
             "plugins": {"static": {"allow_any_user": true}, "phone_code": {"sender": {"type": "log"}}}}
            """#
        return try! input.create(from: JSONInput.parse(Array(body.utf8)))
    }()

    static func run(_ bytes: [UInt8]) throws(InvariantFailure) {
        guard let selector = bytes.first else { return }
        let read = Result { () throws(GatewayError) -> AppSettings? in
            let json = try JSONInput.parse(Array(bytes.dropFirst()))
            if selector % 2 == 0 {
                _ = try input.create(from: json)
                return nil
            }
            return try input.update(current, from: json, byOperator: selector % 4 == 1)
        }
        switch read {
        case .success(let updated?):
            try invariant(updated.appID == current.appID, "an update changed the app id")
        case .success(nil):
            break
        case .failure(let error):
            try invariant(error.kind == .invalidRequest && error.code == .invalidRequest, "threw \(error)")
        }
    }

    /// No apps: the settings checks never ask for one.
    private struct NoApps: AppStore {
        func find(_ appID: AppID) async throws -> StoredApp? { nil }
        func list(only appID: AppID?, nameContaining: String?, after cursor: AppID?, limit: Int) async throws -> [StoredApp] { [] }
        func create(_ app: AppSettings, recording event: AuditEvent) async throws -> Bool { false }
        func update(
            _ appID: AppID, recording event: AuditEvent, _ change: @escaping @Sendable (StoredApp) throws -> AppSettings
        ) async throws -> StoredApp? { nil }
        func delete(_ appID: AppID, recording event: AuditEvent) async throws -> Bool { false }
    }

    /// No sessions: the settings checks never read one.
    private struct NoSessions: SessionStore {
        func find(_ sessionID: UUID, in appID: AppID) async throws -> SessionLookup { SessionLookup(session: nil, now: Date()) }
        func list(of userID: String, in appID: AppID, includingEnded: Bool, at now: Date) async throws -> [StoredSession] { [] }
        func revoke(_ scope: SessionScope, reason: String, recording row: AuditEvent) async throws -> Int { 0 }
    }
}
