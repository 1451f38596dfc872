public import GatewayCore
import GatewayPluginKit
public import GatewayRuntime
import HTTPTypes
import HummingbirdTesting

/// A promise (a limit, single use) attacked as a client with many connections
/// would: two gateway instances on one database, ``attempts`` requests at
/// once spread over both. A suite adopts it and counts what got through.
public protocol ConcurrentAttack {}

extension ConcurrentAttack {
    public static var attempts: Int { 120 }

    /// Sends `Self.attempts` requests at once, alternating between the
    /// instances and, within each, between `paths`; returns each one's
    /// status code, in the order of `index`.
    public func statuses(
        on gateways: [TestGateway], paths: [String] = ["/v1/identity_tokens"],
        _ body: @escaping @Sendable (_ index: Int) -> [String: any Sendable]
    ) async throws -> [Int] {
        let attempts = Self.attempts
        return try await withThrowingTaskGroup(of: (Int, Int).self) { group in
            for index in 0..<attempts {
                let gateway = gateways[index % gateways.count]
                let path = paths[index / gateways.count % paths.count]
                group.addTask {
                    (index, Int(try await gateway.test { try await $0.postJSON(body(index), to: path) }.status.code))
                }
            }
            var statuses = Array(repeating: 0, count: attempts)
            for try await (index, status) in group { statuses[index] = status }
            return statuses
        }
    }

    /// Runs `body` with two instances sharing one fresh database; `signatures`, where given, counts both's signatures.
    public func withTwoInstances(
        plugins: PluginRegistry = TestGateway.staticUsersOnly, rateLimits: RateLimitSettings = RateLimitSettings(),
        signatures: SignatureCount? = nil, _ body: @Sendable @escaping ([TestGateway]) async throws -> Void
    ) async throws {
        try await TestGateway.with(plugins: plugins, rateLimits: rateLimits, signatures: signatures) { first in
            try await first.withReplica { second in try await body([first, second]) }
        }
    }

    public func count(_ statuses: [Int], _ status: Int) -> Int { statuses.filter { $0 == status }.count }

    /// How many audit rows carry each reason ("none" for issued tokens).
    public func reasons(in gateway: TestGateway) async throws -> [String: Int] {
        try await gateway.auditRows().reduce(into: [:]) { $0[$1.reason ?? "none", default: 0] += 1 }
    }
}
