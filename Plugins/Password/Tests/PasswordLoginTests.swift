import Argon2
import Foundation
import GatewayCore
import GatewayHTTPTestSupport
import GatewayPluginKit
import GatewayRuntime
import GatewayPostgres
import GatewayTestSupport
import HTTPTypes
import HummingbirdBcrypt
import HummingbirdTesting
@testable import PasswordPlugin
import PostgresNIO
import StaticUsersPlugin
import Testing

/// Token requests with `credentials.type = "password"` against the app's directory.
@Suite struct PasswordLoginTests {
    @Test func aUserWithTheRightPasswordGetsATokenWithTheirProfileClaims() async throws {
        try await MemoryGateway.with(plugins: .passwordTests) { gateway in
            let app = try await gateway.createPasswordApp()
            let operatorToken = try await gateway.adminToken(.operator)
            try await gateway.putUser(
                "ada", in: app, token: operatorToken,
                [
                    "password": "analytical engine", "first_name": " Ada ", "display_name": "Ada L.", "last_name": "",
                    "email": "ada@example.org",
                ])
            let response = try await gateway.test {
                try await $0.postJSON(passwordRequest(app, user: "ada", password: "analytical engine"))
            }
            #expect(response.status == .ok)
            let token = try #require(identityToken(in: response))
            let parsed = try #require(ParsedIdentityToken(compact: token))
            #expect(parsed.claims["prn"] == .string("ada"))
            #expect(parsed.claims["first_name"] == .string("Ada"))
            #expect(parsed.claims["display_name"] == .string("Ada L."))
            #expect(parsed.claims["last_name"] == nil)
            #expect(parsed.claims["avatar_url"] == nil)
            #expect(parsed.claims["email"] == .string("ada@example.org"))
            let issued = try await gateway.auditRows().filter { $0.event == "token.issued" }
            #expect(issued.map(\.userID) == ["ada"])
        }
    }

    @Test func unknownUserWrongPasswordAndDisabledUserLookTheSameButAreAuditedApart() async throws {
        try await MemoryGateway.with(plugins: .passwordTests) { gateway in
            let app = try await gateway.createPasswordApp()
            let operatorToken = try await gateway.adminToken(.operator)
            try await gateway.putUser("ada", in: app, token: operatorToken, ["password": "analytical engine"])
            try await gateway.putUser("off", in: app, token: operatorToken, ["password": "analytical engine", "disabled": true])
            let (unknown, wrong, disabled) = try await gateway.test { client in
                (
                    try await client.postJSON(passwordRequest(app, user: "nobody", password: "analytical engine")),
                    try await client.postJSON(passwordRequest(app, user: "ada", password: "difference engine")),
                    try await client.postJSON(passwordRequest(app, user: "off", password: "analytical engine"))
                )
            }
            for response in [unknown, wrong, disabled] {
                #expect(response.status == .unauthorized)
                #expect(response.headers[.contentType] == unknown.headers[.contentType])
            }
            #expect(try refusal(unknown) == refusal(wrong))
            #expect(try refusal(unknown) == refusal(disabled))
            #expect(try refusal(unknown)["error"] == "invalid_credentials")
            let reasons = try await gateway.auditRows().filter { $0.event == "token.denied" }.map(\.reason)
            #expect(reasons == ["unknown_user", "bad_password", "disabled"])
        }
    }

    /// An unknown user costs a real argon2 verification: with the only
    /// hashing slot taken, it waits for the hasher exactly as a known user does.
    @Test func anUnknownUserGoesThroughTheHasherLikeAKnownOne() async throws {
        try await withSingleHashingSlot { gateway, app, _, hasher in
            try await hasher.whileOccupied {
                let (unknown, known) = try await gateway.test { client in
                    (
                        try await client.postJSON(passwordRequest(app, user: "nobody", password: "x-analytical")),
                        try await client.postJSON(passwordRequest(app, user: "ada", password: "x-analytical"))
                    )
                }
                for response in [unknown, known] {
                    #expect(response.status == .serviceUnavailable)
                    #expect(try errorBody(response)["error"] as? String == "busy")
                    #expect(response.headers[.retryAfter] == "1")
                }
            }
        }
    }

    @Test func aLoginIsRecordedAtMostOnceAMinute() async throws {
        try await MemoryGateway.with(plugins: .passwordTests) { gateway in
            let app = try await gateway.createPasswordApp()
            let operatorToken = try await gateway.adminToken(.operator)
            try await gateway.putUser("ada", in: app, token: operatorToken, ["password": "analytical engine"])
            @Sendable func loginAfterBackdating(by seconds: Int?) async throws -> Date? {
                if let seconds { try await gateway.backdateLastLogin(of: "ada", in: app, by: seconds) }
                let login = try await gateway.test {
                    try await $0.postJSON(passwordRequest(app, user: "ada", password: "analytical engine"))
                }
                #expect(login.status == .ok)
                // Written behind the login: what a gateway that stops writes at once.
                await PluginRegistry.passwordTests.finishAll()
                return try await gateway.pluginServices.passwordUsers.find("ada", in: app.appID)?.lastLoginAt
            }
            let first = try #require(try await loginAfterBackdating(by: nil))
            #expect(abs(first.timeIntervalSinceNow) < 30)
            let recent = try #require(try await loginAfterBackdating(by: 30))
            #expect(recent.timeIntervalSinceNow < -25, "a login 30 s after the last one is not written")
            let stale = try #require(try await loginAfterBackdating(by: 120))
            #expect(abs(stale.timeIntervalSinceNow) < 30, "a login 2 minutes after the last one is written")
        }
    }

    @Test func aUserOfOneAppCannotSignInToAnother() async throws {
        try await MemoryGateway.with(plugins: .passwordTests) { gateway in
            let first = try await gateway.createPasswordApp()
            let second = try await gateway.createPasswordApp()
            let operatorToken = try await gateway.adminToken(.operator)
            try await gateway.putUser("ada", in: first, token: operatorToken, ["password": "analytical engine"])
            let (own, other) = try await gateway.test { client in
                (
                    try await client.postJSON(passwordRequest(first, user: "ada", password: "analytical engine")),
                    try await client.postJSON(passwordRequest(second, user: "ada", password: "analytical engine"))
                )
            }
            #expect(own.status == .ok)
            #expect(other.status == .unauthorized)
        }
    }

    @Test func changedAppParametersRehashAtTheNextLoginAndThePasswordStillWorks() async throws {
        try await MemoryGateway.with(plugins: .passwordTests) { gateway in
            let app = try await gateway.createPasswordApp()
            let operatorToken = try await gateway.adminToken(.operator)
            try await gateway.putUser("ada", in: app, token: operatorToken, ["password": "analytical engine"])
            let before = try #require(try await gateway.storedHash(of: "ada", in: app))
            #expect(before.hasPrefix("$argon2id$v=19$m=8192,t=1,p=1$"))

            let changed = try await gateway.admin(
                .patch, "/admin/v1/apps/\(app.appID)", token: operatorToken,
                json: ["plugins": ["password": ["argon2": ["memory_kib": 9216, "iterations": 2]]]])
            #expect(changed.status == .ok)
            gateway.tenants.invalidate(app.appID)

            for _ in 0..<2 {
                let response = try await gateway.test {
                    try await $0.postJSON(passwordRequest(app, user: "ada", password: "analytical engine"))
                }
                #expect(response.status == .ok)
            }
            let after = try #require(try await gateway.storedHash(of: "ada", in: app))
            #expect(after.hasPrefix("$argon2id$v=19$m=9216,t=2,p=1$"))
        }
    }

    @Test(arguments: ["$2b$", "$2a$", "$2y$"])
    func anImportedBcryptHashIsUpgradedToArgon2idOnTheFirstLogin(prefix: String) async throws {
        let bcrypt = prefix + Bcrypt.hash("hunter2 is long", cost: 4).dropFirst(4)
        try await MemoryGateway.with(plugins: .passwordTests) { gateway in
            let app = try await gateway.createPasswordApp()
            let operatorToken = try await gateway.adminToken(.operator)
            try await gateway.putUser("legacy", in: app, token: operatorToken, ["password_hash": bcrypt])
            let read = try await gateway.admin(.get, TestGateway.userPath("legacy", in: app), token: operatorToken)
            #expect(try jsonObject(read)["password_scheme"] as? String == "bcrypt")

            let wrong = try await gateway.test {
                try await $0.postJSON(passwordRequest(app, user: "legacy", password: "hunter3 is long"))
            }
            #expect(wrong.status == .unauthorized)
            #expect(try await gateway.storedHash(of: "legacy", in: app) == bcrypt)

            for _ in 0..<2 {
                let response = try await gateway.test {
                    try await $0.postJSON(passwordRequest(app, user: "legacy", password: "hunter2 is long"))
                }
                #expect(response.status == .ok)
            }
            let upgraded = try #require(try await gateway.storedHash(of: "legacy", in: app))
            #expect(upgraded.hasPrefix("$argon2id$v=19$m=8192,t=1,p=1$"))
            #expect(try Argon2.verify("hunter2 is long", against: upgraded))
        }
    }

    @Test func anImportedArgon2iHashWithFourLanesVerifiesAndIsUpgraded() async throws {
        try await MemoryGateway.with(plugins: .passwordTests) { gateway in
            let app = try await gateway.createPasswordApp()
            let operatorToken = try await gateway.adminToken(.operator)
            let reference = "$argon2i$v=19$m=65536,t=2,p=4$c29tZXNhbHQ$IMit9qkFULCMA/ViizL57cnTLOa5DiVM9eMwpAvPwr4"
            try await gateway.putUser("old", in: app, token: operatorToken, ["password_hash": reference])
            let response = try await gateway.test {
                try await $0.postJSON(passwordRequest(app, user: "old", password: "password"))
            }
            #expect(response.status == .ok)
            let upgraded = try #require(try await gateway.storedHash(of: "old", in: app))
            #expect(upgraded.hasPrefix("$argon2id$"))
        }
    }

    @Test func aFullHashingQueueAnswers503BusyAtOnce() async throws {
        try await withSingleHashingSlot { gateway, app, operatorToken, hasher in
            try await hasher.whileOccupied {
                let response = try await gateway.test {
                    try await $0.postJSON(passwordRequest(app, user: "ada", password: "analytical engine"))
                }
                #expect(response.status == .serviceUnavailable)
                #expect(try errorBody(response)["error"] as? String == "busy")
                let write = try await gateway.admin(
                    .put, TestGateway.userPath("bob", in: app), token: operatorToken, json: ["password": "long enough pw"])
                #expect(write.status == .serviceUnavailable)
            }
            #expect(hasher.depth == 0)
            let after = try await gateway.test {
                try await $0.postJSON(passwordRequest(app, user: "ada", password: "analytical engine"))
            }
            #expect(after.status == .ok)
        }
    }

    /// Limits come before the hasher: with its only slot taken, a request
    /// within the limit reaches the hasher (503 `busy`), the next one past
    /// the limit is refused without it (429).
    @Test func aRequestPastItsLimitNeverReachesTheHasher() async throws {
        let hasher = PasswordHasher(limits: .init(concurrency: 1, queueLimit: 0))
        let plugins = PluginRegistry([StaticUsersPlugin(), PasswordPlugin(hasher: hasher)])
        try await TestGateway.with(plugins: plugins) { gateway in
            let app = try await gateway.createPasswordApp(rateLimits: ["ip": RateLimitOverride(limit: 1, periodSeconds: 60)])
            try await hasher.whileOccupied {
                var statuses: [HTTPResponse.Status] = []
                for _ in 0..<2 {
                    statuses.append(
                        try await gateway.test { try await $0.postJSON(passwordRequest(app, user: "ada", password: "analytical engine")) }
                            .status)
                }
                #expect(statuses == [.serviceUnavailable, .tooManyRequests])
            }
            // Counted before the hash, audited after: no admission for a verifier that does I/O.
            #expect(gateway.ledger.statistics.admissions == 0)
        }
    }

    @Test func malformedPasswordCredentialsAre400s() async throws {
        try await MemoryGateway.with(plugins: .passwordTests) { gateway in
            let app = try await gateway.createPasswordApp()
            var noPassword = passwordRequest(app, user: "ada", password: "")
            noPassword["credentials"] = ["type": "password"]
            var noUser = passwordRequest(app, user: "ada", password: "analytical engine")
            noUser["user_id"] = nil
            let tooLong = passwordRequest(app, user: "ada", password: String(repeating: "p", count: 1025))
            for body in [noPassword, noUser, tooLong] {
                let response = try await gateway.test { try await $0.postJSON(body) }
                #expect(response.status == .badRequest)
                #expect(try errorBody(response)["error"] as? String == "invalid_request")
            }
        }
    }
}

/// A gateway whose password hasher runs one hash and queues none, with a
/// password app holding ada / "analytical engine".
func withSingleHashingSlot(
    _ body: @Sendable (MemoryGateway, AppSettings, _ operatorToken: String, PasswordHasher) async throws -> Void
) async throws {
    let hasher = PasswordHasher(limits: .init(concurrency: 1, queueLimit: 0))
    let plugins = PluginRegistry([StaticUsersPlugin(), PasswordPlugin(hasher: hasher)])
    try await MemoryGateway.with(plugins: plugins) { gateway in
        let app = try await gateway.createPasswordApp()
        let operatorToken = try await gateway.adminToken(.operator)
        try await gateway.putUser("ada", in: app, token: operatorToken, ["password": "analytical engine"])
        try await body(gateway, app, operatorToken, hasher)
    }
}

extension PasswordHasher {
    /// Runs `body` while this hasher's only slot is held by a job that
    /// waits for `body` to finish (needs `concurrency: 1, queueLimit: 0`).
    func whileOccupied(memoryKiB: Int = 0, _ body: () async throws -> Void) async throws {
        let (started, startedSignal) = AsyncStream.makeStream(of: Void.self)
        let release = DispatchSemaphore(value: 0)
        let occupant = Task {
            try await self.perform(memoryKiB: memoryKiB, for: .admin(AppID(uuid: UUID()))) {
                startedSignal.yield()
                release.wait()
            }
        }
        for await _ in started { break }
        do {
            try await body()
        } catch {
            release.signal()
            _ = try? await occupant.value
            throw error
        }
        release.signal()
        try await occupant.value
    }
}
