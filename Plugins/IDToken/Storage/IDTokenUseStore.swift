import Foundation
import GatewayCore
import GatewayPluginKit
import GatewayPluginPostgres

/// The provider ID tokens each app has accepted, so that one token mints at
/// most one of the app's tokens: in PostgreSQL (``PostgresIDTokenUses``) or
/// in memory (``MemoryIDTokenUses``).
protocol IDTokenUseStore: Sendable {
    /// Records the token; `false` when the app has accepted it before.
    func firstUse(of token: VerifiedIDToken, in appID: AppID) async throws -> Bool
}

/// The accepted tokens in memory, for tests of the plugin's logic; each kept
/// until a minute after it expires, as in PostgreSQL.
struct MemoryIDTokenUses: IDTokenUseStore {
    struct Rows: Sendable {
        var expiries: [AppID: [[UInt8]: Double]] = [:]
    }

    let table: MemoryTable<Rows>

    func firstUse(of token: VerifiedIDToken, in appID: AppID) async throws -> Bool {
        let now = Date().timeIntervalSince1970
        return table.change { rows in
            rows.expiries[appID] = rows.expiries[appID, default: [:]].filter { $0.value >= now - 60 }
            return rows.expiries[appID, default: [:]].updateValue(token.expiresAt, forKey: token.digest) == nil
        }
    }
}

extension PluginServices {
    /// The accepted tokens where this gateway keeps its plugins' tables.
    var idTokenUses: any IDTokenUseStore {
        switch storage {
        case .database(let database): PostgresIDTokenUses(client: database.postgres, logger: logger, timeout: databaseTimeout)
        case .memory(let memory): MemoryIDTokenUses(table: memory.table(of: MemoryIDTokenUses.Rows.self, empty: .init()))
        }
    }
}
