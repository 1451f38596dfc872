import CoreMetrics
import Foundation
import GatewayCore
public import Logging
public import PostgresNIO

/// How this process uses its connection pool, as PostgreSQL sees it: the
/// process's connections by state (`active`, `idle`, `idle_in_transaction`)
/// from `pg_stat_activity`, found by the `application_name` the pool's
/// connections announce, plus the pool's size. PostgresNIO does not expose
/// its pool's counters, so ``refresh()`` samples them, e.g. on each scrape.
public struct DatabaseConnectionGauge: Sendable {
    /// Unique per process, so replicas sharing a database count apart:
    /// `identity-gateway <host> <pid>` (PostgreSQL keeps 63 bytes).
    public static let applicationName: String = {
        let host = ProcessInfo.processInfo.hostName.filter { $0.isASCII && !$0.isWhitespace }.prefix(36)
        return "identity-gateway \(host) \(ProcessInfo.processInfo.processIdentifier)"
    }()

    static let states = ["active", "idle", "idle_in_transaction"]

    private let client: PostgresClient
    private let maximumConnections: Int
    private let timeout: Duration
    private let logger: Logger

    public init(client: PostgresClient, maximumConnections: Int, timeout: Duration = .seconds(1), logger: Logger) {
        self.client = client
        self.maximumConnections = maximumConnections
        self.timeout = timeout
        self.logger = logger
    }

    /// Updates `gateway_database_connections{state}` and
    /// `gateway_database_connections_limit`. The sampling connection counts
    /// as idle (it is, but for this query). When the database cannot answer
    /// in time the previous values stay.
    public func refresh() async {
        Gauge(label: "gateway_database_connections_limit").record(maximumConnections)
        let client = self.client
        let logger = self.logger
        do {
            let counts = try await withTimeout(timeout) {
                let rows = try await client.tracedQuery(
                    """
                    SELECT replace(state, ' ', '_'), (count(*) + CASE WHEN state = 'active' THEN -1 ELSE 0 END)::int8
                    FROM pg_stat_activity WHERE application_name = \(Self.applicationName) GROUP BY state
                    """, logger: logger)
                var counts: [String: Int] = ["idle": 1]
                for (state, count) in try rows.decode((String?, Int64).self) {
                    counts[state ?? "unknown", default: 0] += Int(count)
                }
                return counts
            }
            for state in Self.states {
                Gauge(label: "gateway_database_connections", dimensions: [("state", state)]).record(counts[state] ?? 0)
            }
        } catch {
            logger.debug("sampling database connections failed", metadata: ["error": "\(error)"])
        }
    }
}
