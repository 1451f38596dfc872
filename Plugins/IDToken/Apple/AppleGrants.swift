import CoreMetrics
import Crypto
import Foundation
import GatewayCore
import GatewayOutbound
import GatewayPluginKit
import GatewayPluginPostgres
import GatewayPostgres
import Logging
import PostgresNIO

/// An Apple refresh token as it is kept: sealed under the plugin's key,
/// bound to the app, the user and the provider, so that a row copied to
/// another user opens for nobody.
struct AppleGrant: Sendable, Equatable {
    let provider: String
    let sealedRefreshToken: [UInt8]

    static let keyPurpose = "apple-refresh-token"

    static func seal(_ refreshToken: String, with key: SymmetricKey, app: AppID, user: String, provider: String) throws -> AppleGrant {
        let box = try AES.GCM.seal(Array(refreshToken.utf8), using: key, authenticating: context(app, user, provider))
        guard let combined = box.combined else { throw GatewayError.internalError }
        return AppleGrant(provider: provider, sealedRefreshToken: Array(combined))
    }

    func refreshToken(with key: SymmetricKey, app: AppID, user: String) throws -> String {
        let box = try AES.GCM.SealedBox(combined: sealedRefreshToken)
        return String(decoding: try AES.GCM.open(box, using: key, authenticating: Self.context(app, user, provider)), as: UTF8.self)
    }

    private static func context(_ app: AppID, _ user: String, _ provider: String) -> Data {
        Data("apple-grant\u{0}\(app.uuid.lowercasedText)\u{0}\(user)\u{0}\(provider)".utf8)
    }
}

/// The Apple grants of an app's users (`apple_grants`), in PostgreSQL or in memory.
protocol AppleGrantStore: Sendable {
    /// Keeps `grant` for the user, replacing one from the same provider.
    func keep(_ grant: AppleGrant, of userID: String, in appID: AppID) async throws
    /// The user's grants.
    func grants(of userID: String, in appID: AppID) async throws -> [AppleGrant]
    /// Drops the user's grants of these providers; how many.
    func forget(_ providers: [String], of userID: String, in appID: AppID) async throws -> Int
}

struct MemoryAppleGrants: AppleGrantStore {
    struct Rows: Sendable {
        var grants: [AppID: [String: [String: AppleGrant]]] = [:]
    }

    let table: MemoryTable<Rows>

    func keep(_ grant: AppleGrant, of userID: String, in appID: AppID) async throws {
        table.change { $0.grants[appID, default: [:]][userID, default: [:]][grant.provider] = grant }
    }

    func grants(of userID: String, in appID: AppID) async throws -> [AppleGrant] {
        table.change { rows in (rows.grants[appID]?[userID] ?? [:]).values.sorted { $0.provider < $1.provider } }
    }

    func forget(_ providers: [String], of userID: String, in appID: AppID) async throws -> Int {
        table.change { rows in
            providers.reduce(0) { count, provider in
                count + (rows.grants[appID]?[userID]?.removeValue(forKey: provider) == nil ? 0 : 1)
            }
        }
    }
}

struct PostgresAppleGrants: AppleGrantStore {
    let client: PostgresClient
    let logger: Logger
    let timeout: Duration

    func keep(_ grant: AppleGrant, of userID: String, in appID: AppID) async throws {
        let (client, logger) = (client, logger)
        try await withDatabaseTimeout(timeout) {
            _ = try await client.committedQuery(
                """
                INSERT INTO apple_grants (app_id, user_id, provider, sealed_refresh_token)
                VALUES (\(appID.uuid), \(userID), \(grant.provider), \(ByteBuffer(bytes: grant.sealedRefreshToken)))
                ON CONFLICT (app_id, user_id, provider)
                DO UPDATE SET sealed_refresh_token = excluded.sealed_refresh_token, created_at = now()
                """, logger: logger)
        }
    }

    func grants(of userID: String, in appID: AppID) async throws -> [AppleGrant] {
        let (client, logger) = (client, logger)
        return try await withDatabaseTimeout(timeout) {
            let rows = try await client.committedQuery(
                """
                SELECT provider, sealed_refresh_token FROM apple_grants
                WHERE app_id = \(appID.uuid) AND user_id = \(userID) ORDER BY provider
                """, logger: logger)
            return try rows.map { row in
                let (provider, sealed) = try row.decode((String, ByteBuffer).self)
                return AppleGrant(provider: provider, sealedRefreshToken: Array(buffer: sealed))
            }
        }
    }

    func forget(_ providers: [String], of userID: String, in appID: AppID) async throws -> Int {
        let (client, logger) = (client, logger)
        return try await withDatabaseTimeout(timeout) {
            try await client.committedQuery(
                """
                DELETE FROM apple_grants WHERE app_id = \(appID.uuid) AND user_id = \(userID) AND provider = ANY(\(providers))
                RETURNING 1
                """, logger: logger
            ).count
        }
    }
}

extension PluginServices {
    /// The Apple grants where this gateway keeps its plugins' tables.
    var appleGrants: any AppleGrantStore {
        switch storage {
        case .database(let database): PostgresAppleGrants(client: database.postgres, logger: logger, timeout: databaseTimeout)
        case .memory(let memory): MemoryAppleGrants(table: memory.table(of: MemoryAppleGrants.Rows.self, empty: .init()))
        }
    }
}

/// Exchanges the authorization code a Sign in with Apple sign-in brings and
/// keeps the refresh token Apple answers, sealed, for the user's deletion to
/// revoke. A failure (Apple away, a code spent or expired, the app's key
/// wrong) is a warning in the log and `gateway_apple_code_exchanges_total{outcome}`,
/// never the sign-in's: the ID token proved the user already.
struct AppleGrantKeeper: Sendable {
    let grantKey: SymmetricKey
    let outbound: OutboundHTTP
    let grants: any AppleGrantStore

    func exchange(_ code: String, with apple: AppleAPI, provider: String, for userID: String, in appID: AppID, logger: Logger) async {
        let outcome: String
        do {
            let refreshToken = try await apple.refreshToken(
                exchanging: code, outbound: outbound, for: appID.uuid.lowercasedText, logger: logger)
            let grant = try AppleGrant.seal(refreshToken, with: grantKey, app: appID, user: userID, provider: provider)
            try await grants.keep(grant, of: userID, in: appID)
            outcome = "kept"
        } catch let failure as AppleAPIFailure {
            logger.warning(
                "Apple authorization code not exchanged", metadata: ["app_id": "\(appID)", "provider": "\(provider)", "reason": "\(failure.reason)"])
            outcome = "refused"
        } catch {
            logger.warning("Apple grant not kept", metadata: ["app_id": "\(appID)", "error": "\(String(reflecting: error))"])
            outcome = "not_kept"
        }
        Counter(label: "gateway_apple_code_exchanges_total", dimensions: [("app_id", appID.description), ("outcome", outcome)]).increment()
    }
}
