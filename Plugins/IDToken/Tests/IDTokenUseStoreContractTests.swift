import Foundation
import GatewayCore
import GatewayHTTPTestSupport
@testable import IDTokenPlugin
import Testing

/// The accepted ID tokens in PostgreSQL and in memory agree: a token is
/// taken once per app, and one long expired is forgotten.
@Suite struct IDTokenUseStoreContractTests {
    @Test func inMemory() async throws {
        try await MemoryGateway.with(plugins: idTokenPlugins()) { try await Self.sequence(on: $0) }
    }

    @Test func inPostgreSQL() async throws {
        try await TestGateway.with(plugins: idTokenPlugins()) { try await Self.sequence(on: $0) }
    }

    static func token(_ byte: UInt8, expiresIn seconds: Double) -> VerifiedIDToken {
        VerifiedIDToken(
            subject: "ada", expiresAt: Date().timeIntervalSince1970 + seconds, emailVerified: false, email: nil, name: nil,
            picture: nil, digest: Array(repeating: byte, count: 32))
    }

    static func sequence(on gateway: some GatewayUnderTest) async throws {
        let app = try await gateway.createApp(activeKey: false) { _ in }.appID
        let other = try await gateway.createApp(activeKey: false) { _ in }.appID
        let uses = gateway.pluginServices.idTokenUses
        #expect(try await uses.firstUse(of: token(1, expiresIn: 300), in: app))
        #expect(try await !uses.firstUse(of: token(1, expiresIn: 300), in: app))
        #expect(try await uses.firstUse(of: token(1, expiresIn: 300), in: other))
        // Expired for over a minute: dropped by the next use in the app, so it is taken again.
        #expect(try await uses.firstUse(of: token(2, expiresIn: -120), in: app))
        #expect(try await uses.firstUse(of: token(3, expiresIn: 300), in: app))
        #expect(try await uses.firstUse(of: token(2, expiresIn: -120), in: app))
        // Expired for less than a minute: still remembered.
        #expect(try await uses.firstUse(of: token(4, expiresIn: -10), in: app))
        #expect(try await !uses.firstUse(of: token(4, expiresIn: -10), in: app))
    }
}
