import Foundation
import GatewayCore
import GatewayCourier
import GatewayHTTPTestSupport
import GatewayTestSupport
@testable import PhoneCodePlugin
import Testing

/// Send protection's state in PostgreSQL and in memory gives the same
/// answers and the same audit rows to one sequence: a trip once, open until
/// its end, a release with its grace, and a human-check token taken once.
@Suite struct SendProtectionStoreContractTests {
    @Test func inMemory() async throws {
        try await MemoryGateway.with(plugins: .phoneCodeTests) { try await Self.sequence(on: $0) }
    }

    @Test func inPostgreSQL() async throws {
        try await TestGateway.with(plugins: .phoneCodeTests) { try await Self.sequence(on: $0) }
    }

    static func sequence(on gateway: some GatewayUnderTest) async throws {
        let (app, other) = (try await gateway.createPhoneApp().appID, try await gateway.createPhoneApp().appID)
        let rowsBefore = try await gateway.auditRows().count
        let store = gateway.pluginServices.sendProtection
        // Whole seconds: PostgreSQL keeps microseconds, and the trips read back must equal.
        let now = Date(timeIntervalSince1970: Date().timeIntervalSince1970.rounded(.down))
        func row(_ event: String) -> AuditEvent {
            AuditEvent(appID: app, event: event, outcome: .failure, requestID: "contract-\(event)", detail: ["prefix": "+491555"])
        }
        func trip(at moment: Date, in appID: AppID = app) async throws -> TripOutcome {
            try await store.trip(
                "+491555", channel: "sms", in: appID, threshold: 20, until: moment.addingTimeInterval(600), grace: 300, now: moment,
                recording: row("send_breaker.tripped"))
        }

        #expect(try await store.openTrip(of: "+491555", channel: "sms", in: app, now: now) == nil)
        #expect(try await trip(at: now) == .tripped)
        #expect(try await trip(at: now.addingTimeInterval(1)) == .alreadyOpen)
        #expect(try await trip(at: now, in: other) == .tripped, "another app's prefix is its own")
        let open = try #require(try await store.openTrip(of: "+491555", channel: "sms", in: app, now: now.addingTimeInterval(599)))
        #expect(open == BreakerTrip(channel: "sms", prefix: "+491555", trippedAt: now, openUntil: now.addingTimeInterval(600), threshold: 20))
        #expect(try await store.openTrip(of: "+491555", channel: "email", in: app, now: now) == nil)
        #expect(try await store.openTrip(of: "+491555", channel: "sms", in: app, now: now.addingTimeInterval(600)) == nil)

        // Released: closed, and not tripped again within the grace; after it, it trips again.
        let released = now.addingTimeInterval(10)
        #expect(try await store.release("+491555", channel: "sms", in: app, by: "op", now: released, recording: row("admin.send_breaker.released")))
        #expect(try await !store.release("+491555", channel: "sms", in: app, by: "op", now: released, recording: row("admin.send_breaker.released")))
        #expect(try await store.openTrip(of: "+491555", channel: "sms", in: app, now: released) == nil)
        #expect(try await trip(at: released.addingTimeInterval(299)) == .released)
        #expect(try await trip(at: released.addingTimeInterval(300)) == .tripped)
        let trips = try await store.trips(in: app)
        #expect(trips.count == 1 && trips.first?.releasedAt == nil && trips.first?.trippedAt == released.addingTimeInterval(300))

        // Rows: each trip that was made and the one release, nothing for the rest.
        let events = try await gateway.auditRows().dropFirst(rowsBefore).map(\.event)
        #expect(events == ["send_breaker.tripped", "send_breaker.tripped", "admin.send_breaker.released", "send_breaker.tripped"])

        // A token is taken once per app until it expires.
        let token = Array(repeating: UInt8(3), count: 32)
        let later = Date().addingTimeInterval(300)
        #expect(try await store.claimToken(token, in: app, until: later))
        #expect(try await !store.claimToken(token, in: app, until: later))
        #expect(try await store.claimToken(token, in: other, until: later))
        let expired = Array(repeating: UInt8(4), count: 32)
        #expect(try await store.claimToken(expired, in: app, until: Date().addingTimeInterval(-1)))
        #expect(try await store.claimToken(expired, in: app, until: later), "an expired claim holds nothing")
    }
}
