import Foundation
public import GatewayCore
public import Logging
public import PostgresNIO

/// The `apps` table: one row a tenant.
public struct AppRepository: Sendable {
    private let client: PostgresClient
    private let logger: Logger

    public init(client: PostgresClient, logger: Logger) {
        self.client = client
        self.logger = logger
    }

    /// Inserts a new app; `false` when the app id is taken.
    @discardableResult
    public func insert(_ app: AppSettings) async throws -> Bool {
        let plugins = try Self.encodePlugins(app.plugins)
        let rows = try await client.query(
            """
            INSERT INTO apps (app_id, name, environment, provider_id, token_ttl_seconds, enabled,
                              credential_types, plugins)
            VALUES (\(app.appID.uuid), \(app.name), \(app.environment.rawValue), \(app.providerID.uuid),
                    \(app.tokenTTLSeconds), \(app.isEnabled), \(app.credentialTypes), \(plugins)::jsonb)
            ON CONFLICT (app_id) DO NOTHING
            RETURNING app_id
            """, logger: logger)
        for try await _ in rows { return true }
        return false
    }

    public func find(_ appID: AppID) async throws -> AppSettings? {
        let rows = try await client.query(
            """
            SELECT app_id, name, environment, provider_id, token_ttl_seconds, enabled,
                   credential_types, plugins::text
            FROM apps WHERE app_id = \(appID.uuid)
            """, logger: logger)
        for try await row in rows.decode((UUID, String, String, UUID, Int, Bool, [String], String).self) {
            return try Self.settings(from: row)
        }
        return nil
    }

    static func settings(from row: (UUID, String, String, UUID, Int, Bool, [String], String)) throws -> AppSettings {
        let (appID, name, environment, providerID, ttl, enabled, credentialTypes, pluginsJSON) = row
        guard let environment = AppEnvironment(rawValue: environment) else {
            throw DatabaseURLError("app \(appID) has an unknown environment '\(environment)'")
        }
        return AppSettings(
            appID: AppID(uuid: appID), name: name, environment: environment, providerID: ProviderID(uuid: providerID),
            tokenTTLSeconds: ttl, isEnabled: enabled, credentialTypes: credentialTypes,
            plugins: try JSONDecoder().decode([String: JSONValue].self, from: Data(pluginsJSON.utf8)))
    }

    static func encodePlugins(_ plugins: [String: JSONValue]) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        return String(decoding: try encoder.encode(plugins), as: UTF8.self)
    }
}
