import GatewayApplication
import GatewayCore
import Testing

/// The settings as `serve` reads them, without starting anything: the
/// defaults each mode gives, and what overrides them.
@Suite struct GatewayConfigurationTests {
    /// What every load needs: a database URL (never connected to here) and a master key.
    private static func load(_ settings: [String: String]) async throws -> GatewayConfiguration {
        try await GatewayConfiguration.load(
            file: nil,
            overrides: [
                "database.url": "postgres://gateway:secret@127.0.0.1:5432/gateway",
                "master_key": MasterKey.generateBase64(),
            ].merging(settings) { _, given in given })
    }

    @Test func productionServesMetricsOnAPortOfTheirOwnUnlessTold() async throws {
        let production = try await Self.load(["mode": "production"])
        #expect(production.http.metricsPort == 9090)
        #expect(production.http.port == 8080)
        let chosen = try await Self.load(["mode": "production", "metrics.port": "0"])
        #expect(chosen.http.metricsPort == 0)
    }

    @Test func developmentServesMetricsOnTheMainPortUnlessTold() async throws {
        let development = try await Self.load(["mode": "development"])
        #expect(development.http.metricsPort == nil)
        let chosen = try await Self.load(["mode": "development", "metrics.port": "9100"])
        #expect(chosen.http.metricsPort == 9100)
    }

    @Test func groupCommitsStartAsSoonAsTheLastCommittedUnlessAnIntervalIsSet() async throws {
        #expect(try await Self.load([:]).database.commitIntervalMilliseconds == 0)
        #expect(try await Self.load(["database.commit_interval_ms": "10"]).database.commitIntervalMilliseconds == 10)
        await #expect(throws: ConfigurationProblems.self) { try await Self.load(["database.commit_interval_ms": "101"]) }
    }

    @Test func everyBadValueIsReportedWithTheVariableItsKeyNames() async throws {
        do {
            _ = try await Self.load([
                "mode": "staging", "http.port": "-1", "rate_limits.ip.limit": "none", "tracing.sample_ratio": "2",
                "password.hash_concurrency": "many", "rate_limits.lease_minimum_limit": "-5",
            ])
            Issue.record("a bad configuration loaded")
        } catch let error as ConfigurationProblems {
            #expect(
                error.problems == [
                    "mode (GATEWAY_MODE): 'staging' is not production or development",
                    "http.port (GATEWAY_HTTP_PORT): '-1' is not a whole number in 0...65535",
                    "rate_limits.ip.limit (GATEWAY_RATE_LIMITS_IP_LIMIT): 'none' is not a whole number in 1...1000000",
                    "rate_limits.lease_minimum_limit (GATEWAY_RATE_LIMITS_LEASE_MINIMUM_LIMIT): '-5' is not a whole number in 0...1000000",
                    "tracing.sample_ratio (GATEWAY_TRACING_SAMPLE_RATIO): '2' is not a number in 0...1",
                    "password.hash_concurrency (GATEWAY_PASSWORD_HASH_CONCURRENCY): 'many' is not a whole number in 0...256",
                ])
        }
    }
}
