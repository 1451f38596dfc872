import Foundation
import GatewayCore
@testable import GatewayPluginKit
import GatewayRuntime
import GatewayTestSupport
import HTTPTypes
import Hummingbird
import Logging
import Synchronization
import Testing

/// What `PublicRequest` and `PublicRequestGate` decide for one public
/// request, without HTTP: the order of its phases (the client's count, the
/// app, the app's limits, the row), what each refusal costs, and how a
/// request ends. The limiter is the gateway's own `RateLimiter`, over the
/// counters and audit trail of ``InMemoryStores``; the apps are the test's.
@Suite struct PublicRequestTests {
    /// Apps by id, the test's to enable, disable or break; counts the lookups that went past memory.
    final class Apps: TenantLookup {
        private struct State {
            var apps: [AppID: Tenant] = [:]
            var cached: Set<AppID> = []
            var loads = 0
            var failing = false
        }
        private let state = Mutex(State())

        func add(_ settings: AppSettings, cached: Bool) {
            state.withLock {
                $0.apps[settings.appID] = Tenant(settings: settings, verifiers: [:], minters: [:])
                if cached { $0.cached.insert(settings.appID) }
            }
        }

        var loads: Int { state.withLock { $0.loads } }

        var failing: Bool {
            get { state.withLock { $0.failing } }
            set { state.withLock { $0.failing = newValue } }
        }

        func cachedTenant(for appID: AppID) -> Tenant? {
            state.withLock { $0.cached.contains(appID) ? $0.apps[appID] : nil }
        }

        func tenant(for appID: AppID, within timeout: Duration) async throws(GatewayError) -> Tenant {
            let found: Tenant?? = state.withLock { state in
                state.loads += 1
                if state.failing { return .none }
                state.cached.insert(appID)
                return .some(state.apps[appID])
            }
            guard let known = found else { throw .unavailable }
            guard let tenant = known else { throw GatewayError(.unknownApp, .notFound, "No app has this id.") }
            return tenant
        }
    }

    /// One gateway's public side: the apps, the memory stores, and a gate over the real limiter.
    struct Setup {
        let apps = Apps()
        let memory = InMemoryStores()
        let gate: PublicRequestGate

        /// `clientLimit` requests per address (the deployment's `ip` policy) in ten minutes.
        init(clientLimit: Int = 300) {
            var settings = RateLimitSettings()
            settings.policies[RateLimitPolicy.clientIP.name] = RateLimitPolicy.clientIP.with(
                limit: clientLimit, periodSeconds: 600)
            let limiter = RateLimiter(ledger: memory.stores.ledger, settings: settings)
            gate = PublicRequestGate(
                tenants: apps, limits: limiter, ledger: memory.stores.ledger, databaseRetry: .once(within: .seconds(5)))
        }

        func open(client: String = "203.0.113.7") -> PublicRequest {
            gate.open(
                "token.denied", credentialType: "static", requestID: UUID().uuidString, clientIP: client,
                userAgent: "tests", logger: Logger(label: "public-request-tests"))
        }

        /// An enabled app, in memory already unless `cached` is false.
        func app(
            cached: Bool = true, enabled: Bool = true, limits: [String: RateLimitOverride] = [:]
        ) -> AppSettings {
            var settings = AppSettings(
                appID: AppID(uuid: UUID()), name: "Public", environment: .development, providerID: ProviderID(uuid: UUID()),
                credentialTypes: ["static"], rateLimits: limits)
            settings.isEnabled = enabled
            apps.add(settings, cached: cached)
            return settings
        }

        /// The rows written so far, oldest first.
        var rows: [AuditEvent] { memory.events }
    }

    /// The error a call threw, or nil.
    static func refusal(_ call: () async throws -> Void) async -> GatewayError? {
        do {
            try await call()
            return nil
        } catch let error as GatewayError {
            return error
        } catch let error as HeaderedError {
            return error.error
        } catch {
            Issue.record("unexpected error \(error)")
            return nil
        }
    }

    /// A request refused before its app is known (a malformed body) still
    /// spends one unit of its address's budget, and once that is spent the
    /// refusal is the 429, not the 400.
    @Test func aRequestRefusedBeforeItsAppIsKnownSpendsItsAddresssBudget() async {
        let setup = Setup(clientLimit: 3)
        var codes: [GatewayError.Code?] = []
        for _ in 0..<5 {
            var request = setup.open()
            codes.append(
                await Self.refusal {
                    try await request.beforeTheAppsLimits { _ in throw GatewayError.invalidRequest("nonce is required") }
                }?.code)
        }
        #expect(codes == [.invalidRequest, .invalidRequest, .invalidRequest, .rateLimited, .rateLimited])
        // Another address has its own budget.
        var other = setup.open(client: "198.51.100.2")
        let answer = await Self.refusal {
            try await other.beforeTheAppsLimits { _ in throw GatewayError.invalidRequest("nonce is required") }
        }
        #expect(answer?.code == .invalidRequest)
    }

    /// An app id not in memory is paid for before it is looked up: made-up
    /// ids stop reaching the database once the address's budget is spent.
    @Test func madeUpAppIDsArePaidForBeforeTheirLookup() async {
        let setup = Setup(clientLimit: 4)
        var codes: [GatewayError.Code?] = []
        for _ in 0..<10 {
            var request = setup.open()
            codes.append(await Self.refusal { _ = try await request.app(AppID(uuid: UUID())) }?.code)
        }
        #expect(codes == Array(repeating: .unknownApp, count: 4) + Array(repeating: .rateLimited, count: 6))
        #expect(setup.apps.loads == 4, "a refused request never reached the lookup")
    }

    /// The address is counted once a request, wherever it is counted first:
    /// before the lookup of an app not in memory, or with the app's limits.
    @Test func theAddressIsCountedOnceARequestWhetherOrNotTheAppWasInMemory() async throws {
        for cached in [true, false] {
            let setup = Setup(clientLimit: 3)
            let app = setup.app(cached: cached)
            var allowed = 0
            for _ in 0..<3 {
                var request = setup.open()
                let tenant = try await request.app(app.appID)
                try await request.check([:], app: tenant.settings)
                allowed += 1
            }
            #expect(allowed == 3, "cached: \(cached)")
            var fourth = setup.open()
            let refused = await Self.refusal {
                let tenant = try await fourth.app(app.appID)
                try await fourth.check([:], app: tenant.settings)
            }
            #expect(refused?.code == .rateLimited, "cached: \(cached)")
        }
    }

    /// A disabled app is a 403, and a lookup the database cannot answer a 503.
    @Test func aDisabledAppIsForbiddenAndAnUnansweredLookupIsUnavailable() async {
        let setup = Setup()
        let disabled = setup.app(enabled: false)
        var request = setup.open()
        #expect(await Self.refusal { _ = try await request.app(disabled.appID) }?.code == .appDisabled)
        let away = setup.app(cached: false)
        setup.apps.failing = true
        var later = setup.open()
        #expect(await Self.refusal { _ = try await later.app(away.appID) }?.code == .unavailable)
    }

    /// The app's limits refuse with a 429 whose row names the policy, and
    /// ``PublicRequest/deny(_:)`` writes that row. The address's own limit
    /// writes the first refusal of a run, not every one after it.
    @Test func aRefusalIsNotedInTheRowAndARunOfAddressRefusalsLeavesOneRow() async throws {
        let setup = Setup(clientLimit: 2)
        let app = setup.app(limits: ["app": RateLimitOverride(limit: 1, periodSeconds: 600)])
        var first = setup.open()
        try await first.check(["app": "*"], app: app)
        var second = setup.open()
        let byApp = try #require(await Self.refusal { try await second.check(["app": "*"], app: app) })
        #expect(byApp.code == .rateLimited)
        let written = await second.deny(byApp)
        #expect(written.reason == "rate_limited" && written.detail["policy"] == "app")

        // The address has spent its two: each further request, to any app, is refused by `ip`; one row for the run.
        let another = setup.app()
        for _ in 0..<4 {
            var request = setup.open()
            let refused = try #require(await Self.refusal { try await request.check([:], app: another) })
            #expect(refused.code == .rateLimited)
            await request.deny(refused)
        }
        let refusals = setup.rows.filter { $0.reason == "rate_limited" }
        #expect(refusals.map { $0.detail["policy"] } == ["app", "ip"])
    }

    /// A verified attempt gives back what its check reserved and writes its
    /// success row in the same statement; a failed one keeps the unit.
    @Test func releaseWritesTheSuccessRowAndGivesBackTheReservation() async throws {
        let setup = Setup()
        let app = setup.app(limits: ["user_failures": RateLimitOverride(limit: 2, periodSeconds: 900)])
        for _ in 0..<5 {
            var request = setup.open()
            try await request.check(["user_failures": "ada"], app: app)
            var issued = request.row
            issued.event = "token.issued"
            issued.outcome = .success
            try await request.release(readingFailuresOf: nil, app: app, recording: issued)
        }
        #expect(setup.rows.filter { $0.event == "token.issued" }.count == 5)
        // Two failures keep their units: the next attempt is refused before any check of the credential.
        for _ in 0..<2 {
            var failed = setup.open()
            try await failed.check(["user_failures": "ada"], app: app)
        }
        var third = setup.open()
        let refused = await Self.refusal { try await third.check(["user_failures": "ada"], app: app) }
        #expect(refused?.code == .rateLimited)
    }

    /// No token without its row: when the row cannot be written, admitting
    /// the request throws 503 and nothing is recorded.
    @Test func anAdmissionWhoseRowCannotBeWrittenIsUnavailable() async throws {
        let setup = Setup()
        let app = setup.app()
        setup.memory.failing = true
        var request = setup.open()
        var issued = request.row
        issued.event = "token.issued"
        let refused = await Self.refusal { try await request.admit([:], app: app, recording: issued) }
        #expect(refused?.code == .unavailable)
        setup.memory.failing = false
        #expect(setup.rows.isEmpty)
    }

    /// How a route's request ends through ``PublicRequestGate``: a success
    /// carries the limits' headers and `no-store`; a failure is its
    /// translated error with its row written; a route whose units count
    /// work done (`givesBackOnFailure`, a code sent) gives back what a
    /// failure reserved, another keeps it; every failure carries the
    /// limits' headers, a refusal its `Retry-After` too.
    @Test func everyAnswerEndsOneWay() async throws {
        let setup = Setup()
        let app = setup.app(limits: ["user_failures": RateLimitOverride(limit: 1, periodSeconds: 600)])
        let logger = Logger(label: "public-request-tests")
        let sent = try await setup.gate.answer(setup.open(), logger: logger, givesBackOnFailure: true) { request in
            try await request.check([:], app: app)
            return Response(status: .accepted)
        }
        #expect(sent.status == .accepted)
        #expect(sent.headers[.cacheControl] == "no-store")
        #expect(sent.headers[HTTPField.Name("RateLimit-Policy")!] != nil)

        // Work that failed after its check gives its unit back: the next attempt is allowed.
        for _ in 0..<2 {
            let failed = await Self.refusal {
                _ = try await setup.gate.answer(setup.open(), logger: logger, givesBackOnFailure: true) { request in
                    try await request.check(["user_failures": "ada"], app: app)
                    throw GatewayError(.credentialServiceUnavailable, .upstreamFailure, "The SMS provider refused the message.")
                }
            }
            #expect(failed?.code == .credentialServiceUnavailable)
        }
        let denials = setup.rows.filter { $0.reason == GatewayError.Code.credentialServiceUnavailable.rawValue }
        #expect(denials.count == 2 && denials.allSatisfy { $0.event == "token.denied" })

        // Without giving back, the first failure spends the one unit; the second is refused, with headers.
        let keeping = Setup()
        let keptApp = keeping.app(limits: ["user_failures": RateLimitOverride(limit: 1, periodSeconds: 600)])
        var thrown: [any Error] = []
        for _ in 0..<2 {
            do {
                _ = try await keeping.gate.answer(keeping.open(), logger: logger, givesBackOnFailure: false) { request in
                    try await request.check(["user_failures": "ada"], app: keptApp)
                    throw GatewayError(.credentialServiceUnavailable, .upstreamFailure, "The SMS provider refused the message.")
                }
            } catch {
                thrown.append(error)
            }
        }
        // Every failure carries the limits' headers, a refusal its Retry-After too.
        let failed = try #require(thrown.first as? HeaderedError)
        #expect(failed.error.code == .credentialServiceUnavailable)
        #expect(failed.headers.contains(.rateLimitPolicy))
        #expect(!failed.headers.contains(.retryAfter))
        let limited = try #require(thrown.last as? HeaderedError)
        #expect(limited.error.code == .rateLimited)
        #expect(limited.headers.contains(.retryAfter))
    }
}
