/// What an app's rate-limit overrides remember of their changes: which the
/// operator set (an app admin may not change or remove those), and when each
/// policy's period last changed for the app (its counters are kept by windows
/// of the period, so a new period starts new counters: until one period has
/// passed, ``SlidingWindow`` counts as if the old period's whole limit had
/// been spent at the change, never from empty).
public struct RateLimitChanges: Sendable, Equatable, Codable {
    /// Overrides an operator wrote (every override of an app an operator
    /// created or last changed).
    public var setByOperator: Set<String>
    /// Policy name → when its period last changed, in seconds since the epoch.
    public var periodChangedAt: [String: Int64]

    public init(setByOperator: Set<String> = [], periodChangedAt: [String: Int64] = [:]) {
        self.setByOperator = setByOperator
        self.periodChangedAt = periodChangedAt
    }

    enum CodingKeys: String, CodingKey {
        case setByOperator = "set_by_operator"
        case periodChangedAt = "period_changed_at"
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        setByOperator = try container.decodeIfPresent(Set<String>.self, forKey: .setByOperator) ?? []
        periodChangedAt = try container.decodeIfPresent([String: Int64].self, forKey: .periodChangedAt) ?? [:]
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(setByOperator.sorted(), forKey: .setByOperator)
        try container.encode(periodChangedAt, forKey: .periodChangedAt)
    }

    /// These changes after `updated` replaced `current`'s overrides at `now`:
    /// an operator's write marks every override it leaves as the operator's
    /// (an app admin's marks none, and keeps the marks of what it left as it
    /// was); a policy whose period (its override's, or `defaultPeriods`'
    /// where none) differs notes `now`. Notes older than the longest period
    /// are dropped: they weigh on nothing any more.
    public func after(
        _ updated: [String: RateLimitOverride], replacing current: [String: RateLimitOverride], byOperator: Bool,
        defaultPeriods: [String: Int], now: Int64
    ) -> RateLimitChanges {
        var changes = self
        if byOperator {
            changes.setByOperator = Set(updated.keys)
        } else {
            changes.setByOperator = setByOperator.filter { updated[$0] != nil && updated[$0] == current[$0] }
        }
        for name in Set(updated.keys).union(current.keys) {
            let before = current[name]?.periodSeconds ?? defaultPeriods[name]
            let after = updated[name]?.periodSeconds ?? defaultPeriods[name]
            if before != after { changes.periodChangedAt[name] = now }
        }
        changes.periodChangedAt = changes.periodChangedAt.filter { now - $0.value < Int64(RateLimitPolicy.periodRange.upperBound) }
        return changes
    }
}
