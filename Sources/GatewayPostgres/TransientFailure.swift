import GatewayCore
import PostgresNIO

/// Which database failures are worth waiting out: the ones a failover, a
/// restart or a cut connection make, which the same statement may get past a
/// moment later. A refusal of the statement itself (a data error, a missing
/// table, a bug) is not.
public enum TransientFailure {
    /// SQLSTATE classes and codes a failing-over or restarting server answers with.
    static let transientStates: Set<String> = [
        "57P01",  // admin_shutdown: the server is stopping (a switchover's fast shutdown)
        "57P02",  // crash_shutdown
        "57P03",  // cannot_connect_now: starting up, or in recovery
        "25006",  // read_only_sql_transaction: a standby reached before the proxy noticed
        "53300",  // too_many_connections
        "40001",  // serialization_failure
        "40P01",  // deadlock_detected
    ]

    /// Whether `error` is the connection or the server's state rather than the statement.
    public static func isTransient(_ error: any Error) -> Bool {
        switch error {
        case is TimeoutError, is ConnectionClosed:
            return true
        case let error as TransactionError:
            return (error.beginError ?? error.closureError ?? error.commitError).map(isTransient) ?? false
        case let error as PSQLError:
            // No SQLSTATE: the connection failed, closed or could not be made.
            guard let state = error.serverInfo?[.sqlState] else { return true }
            return state.hasPrefix("08") || transientStates.contains(state)
        default:
            // The pool's own failures (no connection could be made in time, its circuit breaker open) are
            // `ConnectionPoolError`s of PostgresNIO's `_ConnectionPoolModule`, which it does not export.
            return String(reflecting: type(of: error)).hasSuffix("ConnectionPoolError")
        }
    }
}
