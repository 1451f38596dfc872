import Foundation
@testable import GatewayCore
@testable import GatewayHTTP
import GatewayPluginKit
import GatewayRuntime
import GatewayPostgres
import Logging
import PasswordPlugin
import PhoneCodePlugin
import PostgresNIO
import StaticUsersPlugin

/// App settings and every plugin's options, as `POST /admin/v1/apps` and
/// `PATCH /admin/v1/apps/{id}` read them (the first byte chooses): every
/// refusal is a 400 naming a field, never a 500 or a crash.
enum AppSettingsTarget {
    static let input: AppSettingsInput = {
        // Never run: the settings checks open no connection.
        let client = PostgresClient(
            configuration: .init(host: "127.0.0.1", username: "fuzz", password: nil, database: nil, tls: .disable))
        let masterKey = try! MasterKey(base64: MasterKey.generateBase64())
        return AppSettingsInput(
            plugins: PluginRegistry([
                StaticUsersPlugin(), PasswordPlugin(),
                PhoneCodePlugin(codeKey: masterKey.derivedSecret(for: PhoneCodePlugin.keyPurpose)),
            ]),
            pluginServices: PluginServices(
                client: client, apps: AppRepository(client: client, logger: Logger(label: "fuzz")),
                logger: Logger(label: "fuzz")),
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

    static func run(_ bytes: [UInt8]) {
        guard let selector = bytes.first else { return }
        do {
            let json = try JSONInput.parse(Array(bytes.dropFirst()))
            if selector % 2 == 0 {
                _ = try input.create(from: json)
            } else {
                let updated = try input.update(current, from: json)
                invariant(updated.appID == current.appID, "an update changed the app id")
            }
        } catch {
            invariant(error.kind == .invalidRequest && error.code == .invalidRequest, "threw \(error)")
        }
    }
}
