/// How long to wait before trying again, the one schedule every retry in the
/// gateway follows (a database step, a ledger batch, the audit backlog, an
/// outbox message, an SMS provider's 5xx): `first` before the first retry,
/// twice as long before each next one, never longer than `longest`.
public struct Backoff: Sendable, Equatable {
    public var first: Duration
    public var longest: Duration

    public init(first: Duration, longest: Duration) {
        precondition(first > .zero && longest >= first, "a backoff waits, and its longest pause is at least its first")
        self.first = first
        self.longest = longest
    }

    /// The same pause every time.
    public static func constant(_ pause: Duration) -> Backoff { Backoff(first: pause, longest: pause) }

    /// A database step or batch waiting out a failover: 50 ms growing to 500 ms.
    public static let database = Backoff(first: .milliseconds(50), longest: .milliseconds(500))

    /// The pause before retry number `retry` (1 for the first retry).
    public func pause(beforeRetry retry: Int) -> Duration {
        let doublings = min(max(retry - 1, 0), 30)
        // Past `longest` is as far as it goes: compare before multiplying, so no doubling overflows.
        var pause = first
        for _ in 0..<doublings {
            guard pause < longest else { break }
            pause = pause * 2
        }
        return min(pause, longest)
    }
}
