import CoreMetrics
import GatewayCore
import GatewayPluginKit
import NIOPosix
import Synchronization

/// Generates RSA key pairs on one thread of its own, with bounded admission.
///
/// A 4096-bit key takes one to several seconds of a core, and any app admin
/// may ask for one. Without a bound, one app's admin looping on `generate`
/// would take every core from every tenant's token signing. Here one key is
/// generated at a time, at most ``queueLimit`` more wait, and past that the
/// caller gets 503 `busy` at once. The router makes one per process.
final class KeyGenerator: Sendable {
    /// Keys that may wait while one is generated.
    let queueLimit: Int
    private let pool = NIOThreadPool(numberOfThreads: 1)
    private let admitted = Atomic<Int>(0)

    init(queueLimit: Int = 2) {
        self.queueLimit = queueLimit
        pool.start()
    }

    deinit {
        pool.shutdownGracefully { _ in }
    }

    func generate(bits: Int) async throws -> RSAKeyPair {
        let depth = admitted.wrappingAdd(1, ordering: .relaxed).newValue
        defer { admitted.wrappingSubtract(1, ordering: .relaxed) }
        guard depth <= 1 + queueLimit else {
            Counter(label: "gateway_key_generation_refusals_total").increment()
            throw GatewayError.busy
        }
        return try await pool.runIfActive { try RSAKeyPair.generate(bits: bits) }
    }
}
