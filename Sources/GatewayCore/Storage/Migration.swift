import Crypto
import Foundation

/// One schema change: a `.sql` file from `Migrations/` (the core schema) or
/// a plugin's own `Migrations/` folder, embedded in the binary at build time
/// and applied by `GatewayPostgres`'s `MigrationRunner`.
public struct Migration: Sendable, Equatable {
    /// Who owns the file: `core`, or a plugin's credential type.
    public let source: String
    /// The file name; migrations of one source apply in name order.
    public let name: String
    public let sql: String

    public init(source: String, name: String, sql: String) {
        self.source = source
        self.name = name
        self.sql = sql
    }

    /// SHA-256 of the SQL text, hex: an applied file must never change.
    public var checksum: String {
        SHA256.hash(data: Data(sql.utf8)).map { String(format: "%02x", $0) }.joined()
    }
}
