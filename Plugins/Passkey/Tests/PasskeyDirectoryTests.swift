import Foundation
import GatewayCore
import GatewayHTTPTestSupport
import GatewayRuntime
import GatewayTestSupport
import HTTPTypes
import HummingbirdTesting
import PasskeyPlugin
import PasswordPlugin
import StaticUsersPlugin
import PasskeyTestSupport
import Testing

/// Passkeys of an app whose users the password plugin keeps: a user it
/// disabled or deleted signs in with no passkey of theirs, a user it deleted
/// leaves no passkey or second factor behind (even when the deletion is sent
/// many times at once over two instances), and a directory the gateway
/// cannot open leaves passkeys unchecked, with a log line saying so.
@Suite struct PasskeyDirectoryTests: ConcurrentAttack {
    static var directoryPlugins: PluginRegistry {
        let passwords = PasswordPlugin(hasher: PasswordHasher())
        return PluginRegistry([StaticUsersPlugin(), passwords, PasskeyPlugin(passwords: passwords)])
    }

    /// Where the password plugin keeps the app's users, a passkey signs in
    /// with the profile kept there, and a user disabled there is refused
    /// like every other sign-in of theirs (`passkey_user_disabled`); enabled
    /// again, the same passkey works.
    @Test func aPasskeyOfAUserThePasswordDirectoryDisabledSignsNobodyIn() async throws {
        try await MemoryGateway.with(plugins: Self.directoryPlugins) { gateway in
            let app = try await Self.directoryApp(gateway)
            let operatorToken = try await gateway.operatorToken()
            let user = "/admin/v1/apps/\(app.appID.uuid)/users/ada"
            let ada = try await Self.directoryUserWithAPasskey("ada", app, gateway)
            func passkeySignIn(_ count: UInt32) async throws -> Answer { try await ada.signIn(count) }

            let enabled = try await passkeySignIn(1)
            #expect(enabled.status == .ok, "\(enabled.text)")
            let token = try #require(enabled.json["identity_token"] as? String)
            #expect(ParsedIdentityToken(compact: token)?.claims["display_name"] == .string("ada L."), "the directory's profile")

            let disabled = try await gateway.admin(.patch, user, token: operatorToken, json: ["disabled": true])
            #expect(disabled.status == .ok)
            let refused = try await passkeySignIn(2)
            #expect(refused.status == .unauthorized && refused.json["identity_token"] == nil, "\(refused.text)")
            #expect(try await gateway.reason(of: refused, event: "token.denied") == "passkey_user_disabled")

            #expect(try await gateway.admin(.patch, user, token: operatorToken, json: ["disabled": false]).status == .ok)
            #expect(try await passkeySignIn(3).status == .ok)
        }
    }

    /// A passkey app whose users the password plugin keeps, with an
    /// optional second factor.
    static func directoryApp<Gateway: GatewayUnderTest>(_ gateway: Gateway) async throws -> AppSettings {
        let app = try await gateway.createPasskeyApp()
        let changed = try await gateway.admin(
            .patch, "/admin/v1/apps/\(app.appID.uuid)", token: try await gateway.operatorToken(),
            json: [
                "credential_types": ["password", "passkey"],
                "plugins": [
                    "password": ["argon2": ["memory_kib": 8192, "iterations": 1] as [String: any Sendable]] as [String: any Sendable],
                    "passkey": ["rp_id": Gateway.rpID] as [String: any Sendable],
                ] as [String: any Sendable],
                "mfa": ["requirement": "optional"],
            ])
        try #require(changed.status == .ok)
        gateway.tenants.invalidate(app.appID)
        return app
    }

    /// A user of the directory who registered a passkey with their password's session.
    struct DirectoryUser {
        /// A passkey sign-in whose counter is `count`.
        let signIn: (_ count: UInt32) async throws -> Answer
    }

    static func directoryUserWithAPasskey<Gateway: GatewayUnderTest>(
        _ userID: String, _ app: AppSettings, _ gateway: Gateway
    ) async throws -> DirectoryUser {
        let session = try await directorySession(userID, app, gateway)
        let authenticator = SoftwareAuthenticator()
        #expect(try await gateway.register(authenticator, app, refreshToken: session).status == .created)
        let handle = try await gateway.userHandle(of: session, app)
        return DirectoryUser { count in
            let assertion = authenticator.assert(
                challenge: try await gateway.signInChallenge(app), rpID: Gateway.rpID, origin: Gateway.origin,
                userHandle: handle, signCount: count)
            return try await gateway.post(Gateway.passkeyRequest(app, assertion), to: "/v1/identity_tokens")
        }
    }

    /// A new user of the directory, signed in with their password: their session's refresh token.
    static func directorySession<Gateway: GatewayUnderTest>(
        _ userID: String, _ app: AppSettings, _ gateway: Gateway
    ) async throws -> String {
        let created = try await gateway.admin(
            .put, "/admin/v1/apps/\(app.appID.uuid)/users/\(userID)", token: try await gateway.operatorToken(),
            json: ["password": "analytical engine", "display_name": "\(userID) L."])
        #expect([.created, .ok].contains(created.status))
        let signedIn = try await gateway.post(
            ["app_id": app.appID.uuid.uuidString, "user_id": userID, "nonce": "n-\(UUID())",
             "credentials": ["type": "password", "password": "analytical engine"]], to: "/v1/identity_tokens")
        return try #require(signedIn.json["refresh_token"] as? String, "\(signedIn.text)")
    }

    /// Deleting a user from the password directory takes their passkeys and
    /// second factor with them, each with its row: a passkey of theirs signs
    /// nobody in, and a user created again under the same id inherits
    /// neither. Another user's stay, and a DELETE for an id the directory
    /// does not know (a passkey's user from elsewhere) removes nothing.
    @Test func aUserDeletedFromTheDirectoryLeavesNoPasskeyOrSecondFactorBehind() async throws {
        try await MemoryGateway.with(plugins: Self.directoryPlugins) { gateway in
            let app = try await Self.directoryApp(gateway)
            let token = try await gateway.operatorToken()
            func path(_ user: String, _ tail: String = "") -> String { "/admin/v1/apps/\(app.appID.uuid)/users/\(user)\(tail)" }
            let ada = try await Self.directoryUserWithAPasskey("ada", app, gateway)
            let bob = try await Self.directoryUserWithAPasskey("bob", app, gateway)
            for user in ["ada", "bob", "cy"] {
                #expect(try await gateway.admin(.post, path(user, "/mfa"), token: token, json: nil).status == .created, "\(user)")
            }
            #expect(try await ada.signIn(1).status == .ok)

            #expect(try await gateway.admin(.delete, path("ada"), token: token, json: nil).status == .noContent)
            let refused = try await ada.signIn(2)
            #expect(refused.status == .unauthorized, "\(refused.text)")
            #expect(try await gateway.reason(of: refused, event: "token.denied") == "passkey_unknown_credential")
            #expect(try await gateway.admin(.get, path("ada", "/mfa"), token: token, json: nil).status == .notFound)
            let rows = try await gateway.auditRows().filter { $0.userID == "ada" && $0.text.contains("user_deleted") }
            #expect(rows.map(\.event).sorted() == ["mfa.reset", "passkey.revoked", "session.revoked"], "\(rows)")

            // Created again under the same id: a new user, with neither.
            let again = try await gateway.admin(.put, path("ada"), token: token, json: ["password": "difference engine"])
            #expect(again.status == .created)
            let listed = try await gateway.admin(.get, path("ada", "/passkeys"), token: token, json: nil)
            #expect(listed.status == .ok)
            #expect((try jsonObject(listed)["passkeys"] as? [Any])?.isEmpty == true)
            #expect(try await ada.signIn(3).status == .unauthorized)
            let password = try await gateway.post(
                ["app_id": app.appID.uuid.uuidString, "user_id": "ada", "nonce": "n-\(UUID())",
                 "credentials": ["type": "password", "password": "difference engine"]], to: "/v1/identity_tokens")
            #expect(password.status == .ok, "no second factor is asked of the new ada: \(password.text)")

            // Bob's stay; cy is no user of the directory, so nothing of theirs goes.
            #expect(try await bob.signIn(1).status == .ok)
            #expect(try await gateway.admin(.get, path("bob", "/mfa"), token: token, json: nil).status == .ok)
            #expect(try await gateway.admin(.delete, path("cy"), token: token, json: nil).status == .notFound)
            #expect(try await gateway.admin(.get, path("cy", "/mfa"), token: token, json: nil).status == .ok)
        }
    }

    /// Password options the operator's argon2 ceiling no longer allows (here
    /// the defaults, over a ceiling of 8 MiB) leave no directory to ask: a
    /// passkey still signs in, and the log names the app whose passkeys go
    /// unchecked against its password users.
    @Test func aPasskeySignsInWithoutTheDirectoryItCannotOpenAndTheLogSaysSo() async throws {
        let passwords = PasswordPlugin(hasher: PasswordHasher(limits: .init(maximumMemoryKiB: 8192)))
        let plugins = PluginRegistry([StaticUsersPlugin(), passwords, PasskeyPlugin(passwords: passwords)])
        let log = CapturedLog()
        try await MemoryGateway.with(plugins: plugins, logger: log.logger) { gateway in
            let app = try await gateway.createPasskeyApp()
            let session = try await gateway.aliceSession(app)
            let authenticator = SoftwareAuthenticator()
            #expect(try await gateway.register(authenticator, app, refreshToken: session).status == .created)
            let assertion = authenticator.assert(
                challenge: try await gateway.signInChallenge(app), rpID: MemoryGateway.rpID, origin: MemoryGateway.origin,
                userHandle: try await gateway.userHandle(of: session, app))
            let signedIn = try await gateway.post(MemoryGateway.passkeyRequest(app, assertion), to: "/v1/identity_tokens")
            #expect(signedIn.status == .ok, "\(signedIn.text)")
            #expect(log.text.contains("passkey sign-ins of this app are not checked against its password users"))
            #expect(log.text.contains(app.appID.description) && log.text.contains("plugins.password.argon2"))
        }
    }

    /// The same DELETE sent 16 times at once over two instances on one
    /// database: one 204 and 404s, and each credential's row written once
    /// (`passkey.revoked`, `mfa.reset`), with one `admin.user.deleted`.
    @Test func aDeletionSentManyTimesAtOnceOverTwoInstancesRemovesEachCredentialOnce() async throws {
        try await withTwoInstances(plugins: Self.directoryPlugins) { gateways in
            let app = try await Self.directoryApp(gateways[0])
            let ada = try await Self.directoryUserWithAPasskey("ada", app, gateways[0])
            #expect(try await ada.signIn(1).status == .ok)
            let token = try await gateways[0].operatorToken()
            let path = "/admin/v1/apps/\(app.appID.uuid)/users/ada"
            #expect(try await gateways[1].admin(.post, path + "/mfa", token: token, json: nil).status == .created)
            for gateway in gateways { gateway.tenants.invalidate(app.appID) }

            let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
                for index in 0..<16 {
                    let gateway = gateways[index % 2]
                    group.addTask { Int(try await gateway.admin(.delete, path, token: token, json: nil).status.code) }
                }
                return try await group.reduce(into: [Int]()) { $0.append($1) }
            }
            #expect(count(statuses, 204) == 1, "\(statuses)")
            #expect(count(statuses, 404) == 15, "\(statuses)")
            let events = try await gateways[0].auditRows().filter { $0.userID == "ada" }.map(\.event)
            for event in ["admin.user.deleted", "passkey.revoked", "mfa.reset"] {
                #expect(events.filter { $0 == event }.count == 1, "\(event): \(events)")
            }
            #expect(try await ada.signIn(2).status == .unauthorized)
        }
    }
    /// Passkeys registered with the user's own session while an admin of
    /// the other instance deletes them: each round, 12 registrations (each
    /// on a challenge asked for beforehand) go at once, and the DELETE as
    /// soon as the first has landed. Some land before it, some after, some
    /// in between its steps; afterwards none of them signs anyone in, and
    /// the user created again has none.
    @Test func passkeysRegisteredWhileTheirUserIsDeletedDoNotOutliveThem() async throws {
        try await withTwoInstances(plugins: Self.directoryPlugins) { gateways in
            let app = try await Self.directoryApp(gateways[0])
            let token = try await gateways[0].operatorToken()
            var registered = 0
            var survivors: [String] = []
            for round in 0..<6 {
                let userID = "user-\(round)"
                let path = "/admin/v1/apps/\(app.appID.uuid)/users/\(userID)"
                let session = try await Self.directorySession(userID, app, gateways[0])
                let handle = try await gateways[0].userHandle(of: session, app)
                var attempts: [(SoftwareAuthenticator, [String: any Sendable])] = []
                for _ in 0..<12 {
                    let authenticator = SoftwareAuthenticator()
                    attempts.append(
                        (authenticator, try await gateways[0].registrationRequest(authenticator, app, refreshToken: session)))
                }
                let requests = attempts.map(\.1)
                // The DELETE goes once the first registration has landed, so that the race runs every round
                // (sent together, the deletion, one transaction since the user lifecycle's journal, won all 72).
                let (answers, answered) = AsyncStream.makeStream(of: Int.self)
                let (deleted, statuses) = try await withThrowingTaskGroup(of: (Int?, Int?).self) { group in
                    group.addTask {
                        // The first 201, or every answer should none land.
                        var heard = 0
                        for await status in answers {
                            heard += 1
                            if status == 201 || heard == requests.count { break }
                        }
                        return (Int(try await gateways[1].admin(.delete, path, token: token, json: nil).status.code), nil)
                    }
                    for (index, request) in requests.enumerated() {
                        let gateway = gateways[index % 2]
                        group.addTask {
                            let status = Int(try await gateway.post(request, to: "/v1/passkeys").status.code)
                            answered.yield(status)
                            return (nil, status)
                        }
                    }
                    return try await group.reduce(into: (0, [Int]())) { result, answer in
                        if let deleted = answer.0 { result.0 = deleted }
                        if let status = answer.1 { result.1.append(status) }
                    }
                }
                #expect(deleted == 204)
                #expect(statuses.allSatisfy { [201, 401].contains($0) }, "\(statuses)")
                registered += count(statuses, 201)
                for (authenticator, _) in attempts {
                    let assertion = authenticator.assert(
                        challenge: try await gateways[0].signInChallenge(app), rpID: TestGateway.rpID,
                        origin: TestGateway.origin, userHandle: handle, signCount: 1)
                    let signIn = try await gateways[0].post(TestGateway.passkeyRequest(app, assertion), to: "/v1/identity_tokens")
                    if signIn.status == .ok { survivors.append(userID) }
                }
                #expect(try await gateways[1].admin(.put, path, token: token, json: ["password": "difference engine"]).status == .created)
                let listed = try await gateways[1].admin(.get, path + "/passkeys", token: token, json: nil)
                #expect((try jsonObject(listed)["passkeys"] as? [Any])?.isEmpty == true, "\(userID) created again inherits none")
            }
            #expect(survivors.isEmpty, "passkeys of deleted users that still signed in: \(survivors)")
            #expect(registered > 0, "no registration answered 201: the race ran before or after every DELETE")
        }
    }
    /// What a passkey sign-in's session asks once it is written
    /// (`CredentialVerifier.lapse`, which ends it when the user changed
    /// while the sign-in ran): a directory user disabled since lapses as
    /// `user_disabled`, deleted (passkeys gone with them) as `user_deleted`;
    /// one enabled again, and a user the directory never kept (cy, with a
    /// passkey the admin API registered), do not.
    @Test func aPasskeySignInLapsesWhenTheDirectoryDisabledOrDeletedItsUserMeanwhile() async throws {
        try await MemoryGateway.with(plugins: Self.directoryPlugins) { gateway in
            let app = try await Self.directoryApp(gateway)
            let token = try await gateway.operatorToken()
            let path = "/admin/v1/apps/\(app.appID.uuid)/users/ada"
            _ = try await Self.directoryUserWithAPasskey("ada", app, gateway)
            // cy is no user of the directory: the admin API registers her passkey.
            let cys = "/admin/v1/apps/\(app.appID.uuid)/users/cy/passkeys"
            let options = try Answer(try await gateway.admin(.post, cys + ":registration_options", token: token))
            let registration = SoftwareAuthenticator().register(
                challenge: Array(try base64URLBytes(options.json["challenge"])), rpID: MemoryGateway.rpID, origin: MemoryGateway.origin)
            let registered = try await gateway.admin(
                .post, cys, token: token,
                json: [
                    "client_data_json": Base64URL.encode(registration.clientDataJSON),
                    "attestation_object": Base64URL.encode(registration.attestationObject),
                ])
            #expect(registered.status == .created)
            let verifier = try await gateway.tenants.tenant(for: app.appID).verifier(for: "passkey")
            func lapse(_ user: String) async throws -> String? {
                try await verifier.lapse(of: VerifiedIdentity(userID: user), in: app)
            }
            #expect(try await lapse("ada") == nil)
            #expect(try await gateway.admin(.patch, path, token: token, json: ["disabled": true]).status == .ok)
            #expect(try await lapse("ada") == "user_disabled")
            #expect(try await gateway.admin(.patch, path, token: token, json: ["disabled": false]).status == .ok)
            #expect(try await lapse("ada") == nil)
            #expect(try await gateway.admin(.delete, path, token: token, json: nil).status == .noContent)
            #expect(try await lapse("ada") == "user_deleted")
            #expect(try await lapse("cy") == nil, "a user of another source keeps her session")
        }
    }
}
