import Foundation
import GatewayCore
import GatewayCourier
import GatewayHTTPTestSupport
import GatewayTestSupport
@testable import PhoneCodePlugin
import Testing

/// The codes and numbers in PostgreSQL and in memory give the same answers
/// and the same audit rows to one sequence of calls, so the plugin's tests
/// that run in memory test what runs in production.
@Suite struct PhoneCodeStoreContractTests {
    @Test func inMemory() async throws {
        try await MemoryGateway.with(plugins: .phoneCodeTests) { try await Self.sequence(on: $0) }
    }

    @Test func inPostgreSQL() async throws {
        try await TestGateway.with(plugins: .phoneCodeTests) { try await Self.sequence(on: $0) }
    }

    static func sequence(on gateway: some GatewayUnderTest) async throws {
        let (app, other) = (try await gateway.createPhoneApp().appID, try await gateway.createPhoneApp().appID)
        let rowsBefore = try await gateway.auditRows().count
        let store = gateway.pluginServices.phoneCodes
        let number = try #require(PhoneNumber("+4915100000001"))
        let code: [UInt8] = Array(repeating: 7, count: 32)
        let wrong: [UInt8] = Array(repeating: 8, count: 32)
        func send(_ mac: [UInt8] = code, to appID: AppID = app, attempts: Int = 3) async throws -> Int? {
            try await store.storeUnlessTooSoon(
                code: mac, for: number, in: appID, attempts: attempts, lifetimeSeconds: 300, resendAfterSeconds: 60)
        }

        // A second send within the resend delay is told how long to wait; another app's number is its own.
        let firstSent = ContinuousClock.now
        #expect(try await send() == nil)
        let wait = try #require(try await send(wrong))
        // 60 less the whole seconds since the first send (a loaded machine may take more than one).
        let elapsed = Int((ContinuousClock.now - firstSent).components.seconds)
        #expect((59 - elapsed...60).contains(wait), "waited \(wait) s after \(elapsed) s")
        #expect(try await send(to: other) == nil)

        // Wrong tries spend attempts; the right code is taken once.
        #expect(try await store.check(wrong, for: number, in: app) == .wrong(attemptsLeft: 2))
        #expect(try await store.check(code, for: number, in: app) == .accepted)
        #expect(try await store.check(code, for: number, in: app) == .noCode)

        // Once the delay has passed a new code replaces the old; out of tries, it is gone.
        try await gateway.backdateCodes(by: 61)
        #expect(try await send(wrong, attempts: 2) == nil)
        #expect(try await store.check(code, for: number, in: app) == .wrong(attemptsLeft: 1))
        #expect(try await store.check(code, for: number, in: app) == .wrong(attemptsLeft: 0))
        #expect(try await store.check(wrong, for: number, in: app) == .noCode)

        // An expired code is no code, and does not hold back the next send; a discarded one neither.
        #expect(try await send() == nil)
        try await gateway.expireCodes()
        #expect(try await store.check(code, for: number, in: app) == .noCode)
        #expect(try await send() == nil)
        try await store.discardCode(for: number, in: app)
        #expect(try await store.check(code, for: number, in: app) == .noCode)
        #expect(try await send() == nil)

        // Bindings: new, then rebound; in number order after a cursor; unbound once.
        let adaLovelace = VerifiedIdentity(userID: "ada", profile: UserProfile([.firstName: "Ada"]))
        let numbers = ["+4915100000003", "+4915100000002", "+4915100000001"].compactMap(PhoneNumber.init)
        for bound in numbers {
            #expect(try await store.bind(bound, to: adaLovelace, in: app) { _ in event("bound \(bound)", app) })
        }
        #expect(try await !store.bind(numbers[0], to: VerifiedIdentity(userID: "bob"), in: app) { event("rebound \($0)", app) })
        #expect(try await store.binding(of: numbers[0], in: app)?.identity.userID == "bob")
        #expect(try await store.binding(of: numbers[0], in: other) == nil)
        // (createPhoneApp bound `ada`'s number, +4915112345678, first.)
        #expect(try await store.bindings(in: app, after: nil, limit: 10).map(\.phoneNumber) == numbers.reversed().map(\.text) + [ada])
        #expect(try await store.bindings(in: app, after: "+4915100000001", limit: 1).map(\.phoneNumber) == ["+4915100000002"])
        // A user's numbers, in number order, in their app only.
        #expect(try await store.bindings(of: "ada", in: app).map(\.phoneNumber) == [numbers[2].text, numbers[1].text, ada])
        #expect(try await store.bindings(of: "ada", in: other).map(\.phoneNumber) == [ada])
        #expect(try await store.bindings(of: "nobody", in: app).isEmpty)
        // Unbound from a given user only if bound to them; otherwise by number alone; once.
        #expect(try await !store.unbind(numbers[1], in: app, boundTo: "bob", recording: event("not bob's", app)))
        #expect(try await store.binding(of: numbers[1], in: app)?.identity.userID == "ada")
        #expect(try await store.unbind(numbers[0], in: app, boundTo: "bob", recording: event("unbound from bob", app)))
        #expect(try await store.unbind(numbers[1], in: app, boundTo: nil, recording: event("unbound", app)))
        #expect(try await !store.unbind(numbers[1], in: app, boundTo: nil, recording: event("unbound again", app)))

        let rows = try await gateway.auditRows().dropFirst(rowsBefore).map(\.event)
        #expect(rows == numbers.map { "bound \($0)" } + ["rebound false", "unbound from bob", "unbound"])
    }

    static func event(_ name: String, _ appID: AppID) -> AuditEvent {
        AuditEvent(appID: appID, event: name, outcome: .success, requestID: "contract")
    }
}
