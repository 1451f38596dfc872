import Foundation
import GatewayCore
import GatewayHTTPTestSupport
@testable import PasskeyPlugin
import PasskeyTestSupport
import Testing

/// The passkey tables in PostgreSQL and in memory agree: a challenge is
/// spent once, for its ceremony and app only, and not after it expires; a
/// passkey is added once, at most 20 a user; a counter is stored only over
/// the one read; renaming and revoking touch only the user's own passkey
/// and leave their rows.
@Suite struct PasskeyStoreContractTests {
    @Test func inMemory() async throws {
        try await MemoryGateway.with(plugins: passkeyPlugins) { try await Self.sequence(on: $0) }
    }

    @Test func inPostgreSQL() async throws {
        try await TestGateway.with(plugins: passkeyPlugins) { try await Self.sequence(on: $0) }
    }

    static func passkey(_ id: UInt8, of user: String) -> StoredPasskey {
        StoredPasskey(
            credentialID: [id, id], userID: user, name: "key \(id)", publicKey: SoftwareAuthenticator().coseKey, algorithm: -7,
            signCount: 0, backupEligible: true, backedUp: true, aaguid: UUID(), attestationFormat: "none", createdAt: Date(),
            lastUsedAt: nil)
    }

    static func row(_ app: AppID, _ event: String) -> AuditEvent {
        AuditEvent(appID: app, event: event, outcome: .success, requestID: "contract-\(UUID())")
    }

    static func sequence(on gateway: some GatewayUnderTest) async throws {
        let app = try await gateway.createApp(activeKey: false) { _ in }.appID
        let other = try await gateway.createApp(activeKey: false) { _ in }.appID
        let store = gateway.pluginServices.passkeys

        let digest = [UInt8](repeating: 1, count: 32)
        try await store.keepChallenge(digest, for: .registration, userID: "alice", in: app, lifetimeSeconds: 60)
        #expect(try await !store.spendChallenge(digest, for: .assertion, in: app).spent)
        #expect(try await !store.spendChallenge(digest, for: .registration, in: other).spent)
        let spent = try await store.spendChallenge(digest, for: .registration, in: app)
        #expect(spent.spent && spent.userID == "alice")
        #expect(try await !store.spendChallenge(digest, for: .registration, in: app).spent)
        let expired = [UInt8](repeating: 2, count: 32)
        try await store.keepChallenge(expired, for: .assertion, userID: nil, in: app, lifetimeSeconds: 0)
        #expect(try await !store.spendChallenge(expired, for: .assertion, in: app).spent)

        #expect(try await store.add(passkey(1, of: "alice"), in: app, recording: row(app, "passkey.registered")) == .added)
        #expect(try await store.add(passkey(1, of: "bob"), in: app, recording: row(app, "passkey.registered")) == .duplicate)
        #expect(try await store.add(passkey(1, of: "bob"), in: other, recording: row(other, "passkey.registered")) == .added)
        for id in 2...20 {
            #expect(try await store.add(passkey(UInt8(id), of: "alice"), in: app, recording: row(app, "passkey.registered")) == .added)
        }
        #expect(try await store.add(passkey(21, of: "alice"), in: app, recording: row(app, "passkey.registered")) == .tooMany)
        #expect(try await store.passkeys(of: "alice", in: app).count == 20)

        let used = AssertedCredential(signCount: 9, userVerified: true, backupEligible: true, backedUp: false)
        #expect(try await store.recordUse(of: [1, 1], in: app, previous: 0, asserted: used))
        #expect(try await !store.recordUse(of: [1, 1], in: app, previous: 0, asserted: used))
        let stored = try #require(try await store.passkey([1, 1], in: app))
        #expect(stored.signCount == 9 && !stored.backedUp && stored.lastUsedAt != nil)

        #expect(try await !store.rename([1, 1], of: "bob", in: app, to: "mine now", recording: row(app, "passkey.renamed")))
        #expect(try await store.rename([1, 1], of: "alice", in: app, to: "Phone", recording: row(app, "passkey.renamed")))
        #expect(try await store.passkey([1, 1], in: app)?.name == "Phone")
        #expect(try await !store.revoke([1, 1], of: "bob", in: app, recording: row(app, "passkey.revoked")))
        #expect(try await store.revoke([1, 1], of: "alice", in: app, recording: row(app, "passkey.revoked")))
        #expect(try await store.passkey([1, 1], in: app) == nil)
        #expect(try await store.passkey([1, 1], in: other)?.userID == "bob")

        let events = try await gateway.auditRows().map(\.event)
        #expect(events.filter { $0 == "passkey.registered" }.count == 21)
        #expect(events.filter { $0 == "passkey.renamed" }.count == 1 && events.filter { $0 == "passkey.revoked" }.count == 1)
    }
}
