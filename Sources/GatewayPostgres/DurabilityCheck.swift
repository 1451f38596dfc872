public import Logging
public import PostgresNIO

/// What the gateway's promise "no token without its committed row" needs of
/// the server: a commit that reaches disk before it is acknowledged. The
/// connections ask for `synchronous_commit = on` at startup (``DatabaseURL``),
/// which outranks the server's, the database's and the role's defaults; this
/// reads back what a connection really got, and whether the server syncs at
/// all (`fsync`), which no client can change.
public enum DurabilityCheck {
    /// The settings as one connection sees them.
    public struct Settings: Sendable, Equatable {
        public let fsync: String
        public let synchronousCommit: String

        public init(fsync: String, synchronousCommit: String) {
            self.fsync = fsync
            self.synchronousCommit = synchronousCommit
        }

        /// What breaks the promise, in words for an operator; empty when nothing does.
        public var problems: [String] {
            var problems: [String] = []
            if fsync != "on" {
                problems.append(
                    "PostgreSQL runs with fsync = \(fsync): a crash of its host can lose committed audit rows "
                        + "and corrupt the cluster (acceptable for throwaway test clusters only)")
            }
            if synchronousCommit == "off" {
                problems.append(
                    "the gateway's connections run with synchronous_commit = off although they ask for on "
                        + "(a connection pooler dropping startup parameters?): a crash can lose the rows of tokens already answered")
            }
            return problems
        }
    }

    /// Reads the settings on one of `client`'s connections.
    public static func read(client: PostgresClient, logger: Logger) async throws -> Settings {
        let rows = try await client.tracedQuery(
            "SELECT current_setting('fsync'), current_setting('synchronous_commit')", logger: logger)
        for (fsync, synchronousCommit) in try rows.decode((String, String).self) {
            return Settings(fsync: fsync, synchronousCommit: synchronousCommit)
        }
        return Settings(fsync: "unknown", synchronousCommit: "unknown")
    }

    /// Reads the settings and logs each problem at `critical`, once, at startup.
    @discardableResult
    public static func warnIfUndurable(client: PostgresClient, logger: Logger) async throws -> Settings {
        let settings = try await read(client: client, logger: logger)
        for problem in settings.problems { logger.critical("database durability: \(problem)") }
        return settings
    }
}
