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

/// What `PublicRequest` (the driver of `PublicRequestMachine`) and
/// `PublicRequestGate` do for one public request, without HTTP: the
/// machine's actions run against the limits and the trail (the client's
/// count, the app, the app's limits, the row), what each refusal costs, and
/// how a request ends. The order itself is `PublicRequestMachineTests`'. The limiter is the gateway's own `RateLimiter`, over the
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

        func open(client: String = "203.0.113.7", cost: PublicRequest.Cost = .limitsFirst) -> PublicRequest {
            gate.open(
                "token.denied", credentialType: "static", cost: cost, requestID: UUID().uuidString, clientIP: client,
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
    /// refusal is the 429, not the 400; each leaves its row but the run of
    /// the address's refusals, whose first alone is written.
    @Test func aRequestRefusedBeforeItsAppIsKnownSpendsItsAddresssBudget() async {
        let setup = Setup(clientLimit: 3)
        var codes: [GatewayError.Code] = []
        for _ in 0..<5 {
            var request = setup.open()
            codes.append(await request.end(failing: GatewayError.invalidRequest("nonce is required")).answer.error.code)
        }
        #expect(codes == [.invalidRequest, .invalidRequest, .invalidRequest, .rateLimited, .rateLimited])
        #expect(setup.rows.map(\.reason) == ["invalid_request", "invalid_request", "invalid_request", "rate_limited"])
        // Another address has its own budget.
        var other = setup.open(client: "198.51.100.2")
        #expect(await other.end(failing: GatewayError.invalidRequest("nonce is required")).answer.error.code == .invalidRequest)
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
                _ = try await request.app(app.appID)
                try await request.limits([:])
                allowed += 1
            }
            #expect(allowed == 3, "cached: \(cached)")
            var fourth = setup.open()
            let refused = await Self.refusal {
                _ = try await fourth.app(app.appID)
                try await fourth.limits([:])
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
    /// the request's end writes that row. The address's own limit writes the
    /// first refusal of a run, not every one after it.
    @Test func aRefusalIsNotedInTheRowAndARunOfAddressRefusalsLeavesOneRow() async throws {
        let setup = Setup(clientLimit: 2)
        let app = setup.app(limits: ["app": RateLimitOverride(limit: 1, periodSeconds: 600)])
        var first = setup.open()
        _ = try await first.app(app.appID)
        try await first.limits(["app": "*"])
        var second = setup.open()
        _ = try await second.app(app.appID)
        let byApp = try #require(await Self.refusal { try await second.limits(["app": "*"]) })
        #expect(byApp.code == .rateLimited)
        let written = await second.end(failing: byApp).row
        #expect(written.reason == "rate_limited" && written.detail["policy"] == "app")

        // The address has spent its two: each further request, to any app, is refused by `ip`; one row for the run.
        let another = setup.app()
        for _ in 0..<4 {
            var request = setup.open()
            _ = try await request.app(another.appID)
            let refused = try #require(await Self.refusal { try await request.limits([:]) })
            #expect(refused.code == .rateLimited)
            _ = await request.end(failing: refused)
        }
        let refusals = setup.rows.filter { $0.reason == "rate_limited" }
        #expect(refusals.map { $0.detail["policy"] } == ["app", "ip"])
    }

    /// A verified attempt gives back what its check reserved and writes its
    /// success row in the same statement; a failed one keeps the unit.
    @Test func aSuccessWritesItsRowAndGivesBackTheReservation() async throws {
        let setup = Setup()
        let app = setup.app(limits: ["user_failures": RateLimitOverride(limit: 2, periodSeconds: 900)])
        for _ in 0..<5 {
            var request = setup.open()
            _ = try await request.app(app.appID)
            try await request.limits(["user_failures": "ada"])
            var issued = request.row
            issued.event = "token.issued"
            issued.outcome = .success
            try await request.succeed(recording: issued)
        }
        #expect(setup.rows.filter { $0.event == "token.issued" }.count == 5)
        // Two failures keep their units: the next attempt is refused before any check of the credential.
        for _ in 0..<2 {
            var failed = setup.open()
            _ = try await failed.app(app.appID)
            try await failed.limits(["user_failures": "ada"])
            _ = await failed.end(failing: GatewayError.invalidCredentials)
        }
        var third = setup.open()
        _ = try await third.app(app.appID)
        let refused = await Self.refusal { try await third.limits(["user_failures": "ada"]) }
        #expect(refused?.code == .rateLimited)
    }

    /// No token without its row: when the row cannot be written, the
    /// success throws 503 and nothing is recorded.
    @Test func aSuccessWhoseRowCannotBeWrittenIsUnavailable() async throws {
        let setup = Setup()
        let app = setup.app()
        var request = setup.open(cost: .verifyFirst)
        _ = try await request.app(app.appID)
        setup.memory.failing = true
        var issued = request.row
        issued.event = "token.issued"
        let refused = await Self.refusal { try await request.succeed(recording: issued) }
        #expect(refused?.code == .unavailable)
        setup.memory.failing = false
        #expect(setup.rows.isEmpty)
    }

    /// A route that answers a success without writing its row is answered
    /// 500, and the request's denial is its row: the driver refuses the step
    /// out of order rather than answer without a row.
    @Test func aSuccessAnsweredWithoutItsRowIsRefused() async throws {
        let setup = Setup()
        let app = setup.app()
        let answer = await Self.refusal {
            _ = try await setup.gate.answer(setup.open()) { request in
                _ = try await request.app(app.appID)
                try await request.limits([:])
                return Response(status: .ok)
            }
        }
        #expect(answer?.code == .internalError)
        #expect(setup.rows.map(\.reason) == ["internal_error"])
    }

    /// How a route's request ends through ``PublicRequestGate``: a success
    /// carries the limits' headers and `no-store`; a failure is its
    /// translated error with its row written; a route whose units count
    /// work done (``PublicRequestMachine/Cost/sendsWork``, a code sent)
    /// gives back what a failure reserved, another keeps it; every failure
    /// carries the limits' headers, a refusal its `Retry-After` too.
    @Test func everyAnswerEndsOneWay() async throws {
        let setup = Setup()
        let app = setup.app(limits: ["user_failures": RateLimitOverride(limit: 1, periodSeconds: 600)])
        let sent = try await setup.gate.answer(setup.open(cost: .sendsWork)) { request in
            _ = try await request.app(app.appID)
            try await request.limits([:])
            try await request.succeedWithoutWaiting()
            return Response(status: .accepted)
        }
        #expect(sent.status == .accepted)
        #expect(sent.headers[.cacheControl] == "no-store")
        #expect(sent.headers[HTTPField.Name("RateLimit-Policy")!] != nil)

        // Work that failed after its check gives its unit back: the next attempt is allowed.
        for _ in 0..<2 {
            let failed = await Self.refusal {
                _ = try await setup.gate.answer(setup.open(cost: .sendsWork)) { request in
                    _ = try await request.app(app.appID)
                    try await request.limits(["user_failures": "ada"])
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
                _ = try await keeping.gate.answer(keeping.open(cost: .limitsFirst)) { request in
                    _ = try await request.app(keptApp.appID)
                    try await request.limits(["user_failures": "ada"])
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
