/// What `/readyz` asks of storage.
public protocol StorageHealth: Sendable {
    /// Returns once the database answers a trivial query; throws if it cannot.
    func ping() async throws
    /// The audit rows kept in memory because the database would not take
    /// them: how long the oldest has waited, and how many wait. `nil` when
    /// none does.
    var keptAuditRows: (oldestAge: Duration, count: Int)? { get }
}
