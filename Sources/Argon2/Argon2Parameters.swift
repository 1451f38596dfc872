/// The cost of an argon2 hash: memory in KiB, passes over it, and lanes.
public struct Argon2Parameters: Sendable, Hashable, CustomStringConvertible {
    /// OWASP's recommendation for argon2id: 19 MiB, two passes, one lane.
    public static let owasp = Argon2Parameters(memoryKiB: 19_456, iterations: 2)

    /// What a new hash may cost. Below 8 MiB argon2id protects little; above
    /// 256 MiB one login holds too much memory for a shared gateway.
    public static let memoryKiBRange = 8_192...262_144
    public static let iterationsRange = 1...10

    public let memoryKiB: Int
    public let iterations: Int
    /// New hashes always use one lane: libsodium computes lanes one after
    /// another, so more lanes would cost time without adding strength.
    public let parallelism: Int

    public init(memoryKiB: Int, iterations: Int, parallelism: Int = 1) {
        self.memoryKiB = memoryKiB
        self.iterations = iterations
        self.parallelism = parallelism
    }

    /// Whether these parameters may be used for new hashes.
    public var isWithinBounds: Bool {
        Self.memoryKiBRange.contains(memoryKiB) && Self.iterationsRange.contains(iterations) && parallelism == 1
    }

    public var description: String { "m=\(memoryKiB),t=\(iterations),p=\(parallelism)" }
}
