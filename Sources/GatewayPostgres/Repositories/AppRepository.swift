import Foundation
public import GatewayCore
public import Logging
public import PostgresNIO

/// The `apps` table: one row a tenant. Writes take the connection of the
/// caller's transaction and announce the change on ``AppChangeNotification``.
public struct AppRepository: Sendable {
    let client: PostgresClient
    let logger: Logger

    public init(client: PostgresClient, logger: Logger) {
        self.client = client
        self.logger = logger
    }

    /// Inserts a new app; `false` when the app id is taken.
    @discardableResult
    public func insert(_ app: AppSettings) async throws -> Bool {
        try await client.withConnection { try await insert(app, on: $0) }
    }

    /// Inserts a new app; `false` when the app id is taken.
    public func insert(_ app: AppSettings, on connection: PostgresConnection) async throws -> Bool {
        let plugins = try Self.encode(app.plugins)
        let rateLimits = try Self.encode(app.rateLimits)
        let changes = try Self.encode(app.rateLimitChanges)
        let profiles = try Self.encode(app.tokenProfiles)
        let sessions = try app.sessions.map { try Self.encode($0) }
        let mfa = try app.mfa.map { try Self.encode($0) }
        let selfService = try app.selfService.map { try Self.encode($0) }
        let rows = try await connection.tracedQuery(
            """
            WITH inserted AS (
                INSERT INTO apps (app_id, name, environment, provider_id, token_ttl_seconds, enabled,
                                  credential_types, plugins, rate_limits, rate_limit_changes, token_profiles, sessions, mfa, self_service)
                VALUES (\(app.appID.uuid), \(app.name), \(app.environment.rawValue), \(app.providerID.uuid),
                        \(app.tokenTTLSeconds), \(app.isEnabled), \(app.credentialTypes), \(plugins)::jsonb,
                        \(rateLimits)::jsonb, \(changes)::jsonb, \(profiles)::jsonb, \(sessions)::jsonb, \(mfa)::jsonb, \(selfService)::jsonb)
                ON CONFLICT (app_id) DO NOTHING
                RETURNING app_id
            )
            SELECT pg_notify(\(AppChangeNotification.channel), app_id::text) FROM inserted
            """, logger: logger)
        return !rows.isEmpty
    }

    /// Replaces the app's settings; `false` when there is no such app.
    public func update(_ app: AppSettings, on connection: PostgresConnection) async throws -> Bool {
        let plugins = try Self.encode(app.plugins)
        let rateLimits = try Self.encode(app.rateLimits)
        let changes = try Self.encode(app.rateLimitChanges)
        let profiles = try Self.encode(app.tokenProfiles)
        let sessions = try app.sessions.map { try Self.encode($0) }
        let mfa = try app.mfa.map { try Self.encode($0) }
        let selfService = try app.selfService.map { try Self.encode($0) }
        let rows = try await connection.tracedQuery(
            """
            WITH updated AS (
                UPDATE apps SET name = \(app.name), environment = \(app.environment.rawValue),
                    provider_id = \(app.providerID.uuid), token_ttl_seconds = \(app.tokenTTLSeconds),
                    enabled = \(app.isEnabled), credential_types = \(app.credentialTypes),
                    plugins = \(plugins)::jsonb, rate_limits = \(rateLimits)::jsonb, rate_limit_changes = \(changes)::jsonb,
                    token_profiles = \(profiles)::jsonb, sessions = \(sessions)::jsonb, mfa = \(mfa)::jsonb, self_service = \(selfService)::jsonb,
                    updated_at = now()
                WHERE app_id = \(app.appID.uuid)
                RETURNING app_id
            )
            SELECT pg_notify(\(AppChangeNotification.channel), app_id::text) FROM updated
            """, logger: logger)
        return !rows.isEmpty
    }

    /// Deletes the app and its keys; `false` when there is no such app.
    public func delete(_ appID: AppID, on connection: PostgresConnection) async throws -> Bool {
        let rows = try await connection.tracedQuery(
            """
            WITH deleted AS (DELETE FROM apps WHERE app_id = \(appID.uuid) RETURNING app_id)
            SELECT pg_notify(\(AppChangeNotification.channel), app_id::text) FROM deleted
            """, logger: logger)
        return !rows.isEmpty
    }

    public func find(_ appID: AppID) async throws -> StoredApp? {
        try await list(only: appID, nameContaining: nil, after: nil, limit: 1).first
    }

    /// Apps in app id order, starting after `cursor`; only `appID` when given.
    public func list(
        only appID: AppID? = nil, nameContaining: String? = nil, after cursor: AppID?, limit: Int
    ) async throws -> [StoredApp] {
        let rows = try await client.tracedQuery(
            """
            SELECT \(unescaped: Self.columns)
            FROM apps
            WHERE (\(appID?.uuid)::uuid IS NULL OR app_id = \(appID?.uuid))
              AND (\(nameContaining)::text IS NULL OR strpos(lower(name), lower(\(nameContaining))) > 0)
              AND (\(cursor?.uuid)::uuid IS NULL OR app_id > \(cursor?.uuid))
            ORDER BY app_id
            LIMIT \(limit)
            """, logger: logger)
        return try Self.decode(rows)
    }

    /// How many apps list `profile` among their token profiles.
    public func countListing(profile: String) async throws -> Int {
        let rows = try await client.tracedQuery(
            "SELECT count(*)::int FROM apps WHERE token_profiles @> jsonb_build_array(jsonb_build_object('type', \(profile)::text))",
            logger: logger)
        return try rows.decode(Int.self).first ?? 0
    }

    /// The app's row, locked until `connection`'s transaction ends, so that
    /// what the caller checks is what its write replaces: a concurrent
    /// writer waits for this transaction and then reads its result.
    public func find(_ appID: AppID, lockingOn connection: PostgresConnection) async throws -> StoredApp? {
        let rows = try await connection.tracedQuery(
            "SELECT \(unescaped: Self.columns) FROM apps WHERE app_id = \(appID.uuid) FOR UPDATE", logger: logger)
        return try Self.decode(rows).first
    }

    /// Every app's ``AppVersion`` in one read (10 000 apps: one index scan of
    /// two small tables), computed as ``AppVersion/init(app:keys:)`` computes
    /// it from one app's rows.
    public func versions() async throws -> [AppID: AppVersion] {
        let rows = try await client.tracedQuery(
            """
            SELECT a.app_id, a.updated_at, count(k.key_id)::int8,
                   max(greatest(k.created_at, k.activated_at, k.retired_at))
            FROM apps a LEFT JOIN app_keys k ON k.app_id = a.app_id
            GROUP BY a.app_id, a.updated_at
            """, logger: logger)
        var versions: [AppID: AppVersion] = [:]
        for (appID, updated, keyCount, latest) in try rows.decode((UUID, Date, Int64, Date?).self) {
            versions[AppID(uuid: appID)] = AppVersion(updatedAt: updated, keyCount: Int(keyCount), latestKeyChange: latest)
        }
        return versions
    }

    private static let columns = """
        app_id, name, environment, provider_id, token_ttl_seconds, enabled,
        credential_types, plugins::text, rate_limits::text, rate_limit_changes::text, token_profiles::text, sessions::text, mfa::text, self_service::text,
        created_at, updated_at
        """

    private static func decode(_ rows: [PostgresRow]) throws -> [StoredApp] {
        var apps: [StoredApp] = []
        for row in try rows.decode(
            (UUID, String, String, UUID, Int, Bool, [String], String, String, String, String, String?, String?, String?, Date, Date).self)
        {
            let (
                appID, name, environment, providerID, ttl, enabled, credentialTypes, pluginsJSON, limitsJSON, changesJSON,
                profilesJSON, sessionsJSON, mfaJSON, selfServiceJSON, created, updated
            ) = row
            guard let environment = AppEnvironment(rawValue: environment) else {
                throw UnreadableRow("app \(appID) has an unknown environment '\(environment)'")
            }
            let settings = AppSettings(
                appID: AppID(uuid: appID), name: name, environment: environment,
                providerID: ProviderID(uuid: providerID), tokenTTLSeconds: ttl, isEnabled: enabled,
                credentialTypes: credentialTypes,
                plugins: try JSONCoding.decode([String: JSONValue].self, from: pluginsJSON),
                rateLimits: try JSONCoding.decode([String: RateLimitOverride].self, from: limitsJSON),
                rateLimitChanges: try JSONCoding.decode(RateLimitChanges.self, from: changesJSON),
                tokenProfiles: try JSONCoding.decode([TokenProfileEntry].self, from: profilesJSON),
                sessions: try sessionsJSON.map { try JSONCoding.decode(SessionSettings.self, from: $0) },
                mfa: try mfaJSON.map { try JSONCoding.decode(SecondFactorSettings.self, from: $0) },
                selfService: try selfServiceJSON.map { try JSONCoding.decode(SelfServiceSettings.self, from: $0) })
            apps.append(StoredApp(settings: settings, createdAt: created, updatedAt: updated))
        }
        return apps
    }

    static func encode(_ value: some Encodable) throws -> String {
        try JSONCoding.text(of: value)
    }
}
