import Foundation
public import GatewayCore

/// The expand/contract rule (CONTRIBUTING.md, "Migrations"): a release's
/// migrations only add, so the previous release's replicas keep serving
/// the database while they are replaced one at a time, and keep serving
/// it if the upgrade is rolled back. Dropping, renaming or retyping what
/// the previous release reads, a `NOT NULL` it does not fill, or an index
/// built with a lock that stops writes (`CREATE INDEX` without
/// `CONCURRENTLY` on a table that already exists) waits for a later
/// release, in a migration marked as the contraction it is:
///
///     -- contracts: sessions.legacy_column (unread since the release after 0019)
///
/// The runner records whether each migration only expanded
/// (`schema_migrations.expands_only`), which is how an older binary tells
/// a database it can still serve from one it cannot.
public enum MigrationReview {
    /// The line that marks a migration as a deliberate contraction.
    public static let contractionMarker = "-- contracts:"
    /// The line that makes the runner apply a migration statement by
    /// statement outside a transaction: what `CREATE INDEX CONCURRENTLY`
    /// needs. Each statement must be safe to run again (`IF NOT EXISTS`),
    /// since a failure leaves the ones before it applied.
    public static let outsideATransactionMarker = "-- migrate: outside a transaction"

    /// The last migration of each source written before the rule: those
    /// were applied to databases in the field as they are and cannot change
    /// (their checksums are recorded), so the rule starts after them.
    public static let writtenBeforeTheRule: [String: String] = [
        "core": "0018_user_changes.sql", "email_code": "0002_account_codes.sql", "id_token": "0003_apple_grants.sql",
        "passkey": "0002_passkeys_bound_session.sql", "password": "0004_password_users_email_verified.sql",
        "phone_code": "0003_phone_numbers_by_user.sql",
    ]

    /// One statement the previous release's replicas could trip on.
    public struct Finding: Sendable, Equatable, CustomStringConvertible {
        public let migration: String
        public let problem: String
        public let statement: String

        public var description: String { "\(migration): \(problem): \(statement)" }
    }

    public static func isContraction(_ migration: Migration) -> Bool {
        lines(of: migration).contains { $0.hasPrefix(contractionMarker) }
    }

    public static func runsOutsideATransaction(_ migration: Migration) -> Bool {
        lines(of: migration).contains { $0 == outsideATransactionMarker }
    }

    /// Whether the migration only adds: no finding and no contraction marker.
    public static func expandsOnly(_ migration: Migration) -> Bool {
        !isContraction(migration) && findings(in: migration).isEmpty
    }

    /// Whether the rule applies to the migration (it came after ``writtenBeforeTheRule``).
    public static func isUnderTheRule(_ migration: Migration) -> Bool {
        guard let last = writtenBeforeTheRule[migration.source] else { return true }
        return migration.name > last
    }

    /// What in `migration` breaks the rule, statement by statement.
    public static func findings(in migration: Migration) -> [Finding] {
        var created: Set<String> = []
        var found: [Finding] = []
        for statement in SQLStatementSplitter.split(migration.sql) {
            let text = normalized(statement)
            func finding(_ problem: String) {
                found.append(Finding(migration: "\(migration.source)/\(migration.name)", problem: problem, statement: text))
            }
            if let table = firstMatch(of: #/^CREATE (?:UNLOGGED )?TABLE (?:IF NOT EXISTS )?([A-Z0-9_."]+)/#, in: text) {
                created.insert(table)
            }
            if text.hasPrefix("DROP ") { finding("drops what the previous release may read") }
            if text.hasPrefix("TRUNCATE ") { finding("empties a table the previous release reads") }
            if text.hasPrefix("ALTER ") {
                if text.contains(" DROP COLUMN ") || text.contains(" DROP CONSTRAINT ") {
                    finding("drops what the previous release may read")
                }
                if text.contains(" RENAME ") { finding("renames what the previous release reads") }
                if text.contains(" SET DATA TYPE ") || text.firstMatch(of: #/ALTER COLUMN [A-Z0-9_"]+ TYPE /#) != nil {
                    finding("changes a column's type")
                }
                if text.contains(" SET NOT NULL") { finding("makes a column NOT NULL that the previous release may leave empty") }
                if text.contains(" ADD COLUMN ") && text.contains(" NOT NULL") && !text.contains(" DEFAULT ") {
                    finding("adds a NOT NULL column without a default, which the previous release's inserts leave empty")
                }
            }
            if let table = firstMatch(of: #/^CREATE (?:UNIQUE )?INDEX (?!CONCURRENTLY).*? ON (?:ONLY )?([A-Z0-9_."]+)/#, in: text),
                !created.contains(table)
            {
                finding("builds an index on an existing table without CONCURRENTLY, which stops its writes while it builds")
            }
        }
        return found
    }

    /// The statement upper-cased, its comments gone and its white space one space each.
    static func normalized(_ statement: String) -> String {
        statement.split(separator: "\n").map { line in
            line.range(of: "--").map { line[..<$0.lowerBound] } ?? line[...]
        }
        .joined(separator: " ")
        .uppercased()
        .split(whereSeparator: \.isWhitespace)
        .joined(separator: " ")
    }

    private static func firstMatch(of pattern: Regex<(Substring, Substring)>, in text: String) -> String? {
        text.firstMatch(of: pattern).map { String($0.output.1) }
    }

    private static func lines(of migration: Migration) -> [String] {
        migration.sql.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
    }
}
