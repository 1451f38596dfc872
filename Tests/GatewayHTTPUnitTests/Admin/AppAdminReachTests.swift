import Foundation
import GatewayCore
import GatewayHTTPTestSupport
import GatewayRuntime
import GatewayTestSupport
import HTTPTypes
import HummingbirdTesting
import Testing

/// An app's own admin token runs its app, not the deployment: what Layer
/// trusts (provider_id), the environment, an operator's "off", and limits
/// looser than the deployment's stay with operators.
@Suite struct AppAdminReachTests {
    @Test func anAppAdminCannotTakeAnotherTenantsIssuerNorLoosenWhatTheOperatorSet() async throws {
        try await MemoryGateway.with(plugins: .installed) { gateway in
            let victim = try await gateway.createApp()
            // Passwords, which a production app may accept.
            let attacker = try await gateway.createApp {
                $0.credentialTypes = ["password"]
                $0.plugins = ["password": .object([:])]
            }
            let appAdmin = try await gateway.adminToken(.app(attacker.appID))
            let path = "/admin/v1/apps/\(attacker.appID)"

            let refused: [([String: any Sendable], String)] = [
                (["provider_id": victim.providerID.uuid.uuidString], "Changing provider_id"),
                (["environment": "production"], "Changing environment"),
                (["rate_limits": ["ip": ["limit": 1_000_000, "period_seconds": 1]]], "rate_limits.ip looser"),
                (["rate_limits": ["user_failures": ["limit": 10, "period_seconds": 1]]], "rate_limits.user_failures looser"),
            ]
            for (change, message) in refused {
                let response = try await gateway.admin(.patch, path, token: appAdmin, json: change)
                #expect(response.status == .forbidden, "\(change)")
                #expect((try errorBody(response)["message"] as? String)?.hasPrefix(message) == true, "\(text(response))")
            }
            // Tightening and disabling are the app admin's own.
            let tightened = try await gateway.admin(
                .patch, path, token: appAdmin,
                json: ["rate_limits": ["user_failures": ["limit": 3, "period_seconds": 900]], "name": "renamed"])
            #expect(tightened.status == .ok, "\(text(tightened))")
            #expect(try await gateway.admin(.patch, path, token: appAdmin, json: ["enabled": false]).status == .ok)
            // Off is off until an operator says otherwise.
            let reenabled = try await gateway.admin(.patch, path, token: appAdmin, json: ["enabled": true])
            #expect(reenabled.status == .forbidden)
            let operatorToken = try await gateway.adminToken(.operator)
            #expect(try await gateway.admin(.patch, path, token: operatorToken, json: ["enabled": true]).status == .ok)
            // The operator may do all of it.
            let operatorChange = try await gateway.admin(
                .patch, path, token: operatorToken,
                json: ["environment": "production", "rate_limits": ["ip": ["limit": 1_000_000, "period_seconds": 1]]])
            #expect(operatorChange.status == .ok, "\(text(operatorChange))")
        }
    }

    /// A second factor in place may have been the operator's: the app's
    /// admin turns it on and tightens it, never loosens nor turns it off.
    @Test func anAppAdminTightensASecondFactorButNeverLoosensIt() async throws {
        try await MemoryGateway.with { gateway in
            let app = try await gateway.createApp()
            let path = "/admin/v1/apps/\(app.appID)"
            let operatorToken = try await gateway.adminToken(.operator)
            let appAdmin = try await gateway.adminToken(.app(app.appID))
            let required: [String: any Sendable] = ["requirement": "required", "ticket_lifetime_seconds": 300]
            #expect(try await gateway.admin(.patch, path, token: operatorToken, json: ["mfa": required]).status == .ok)

            let refused: [(any Sendable, String)] = [
                (NSNull(), "Turning the second factor (mfa) off"),
                (["requirement": "optional", "ticket_lifetime_seconds": 300] as [String: any Sendable], "Loosening mfa.requirement"),
                (
                    ["requirement": "required", "exempt_credential_types": ["static"], "ticket_lifetime_seconds": 300] as [String: any Sendable],
                    "Exempting static"
                ),
                (["requirement": "required", "ticket_lifetime_seconds": 900] as [String: any Sendable], "Lengthening mfa.ticket_lifetime_seconds"),
            ]
            for (change, message) in refused {
                let response = try await gateway.admin(.patch, path, token: appAdmin, json: ["mfa": change])
                #expect(response.status == .forbidden, "\(change): \(text(response))")
                #expect((try errorBody(response)["message"] as? String)?.hasPrefix(message) == true, "\(text(response))")
            }
            let shown = try jsonObject(try await gateway.admin(.get, path, token: appAdmin))
            #expect((shown["mfa"] as? [String: Any])?["requirement"] as? String == "required")
            // Tighter is the app admin's; and the operator may loosen or turn it off.
            let shorter = try await gateway.admin(
                .patch, path, token: appAdmin, json: ["mfa": ["requirement": "required", "ticket_lifetime_seconds": 120] as [String: any Sendable]])
            #expect(shorter.status == .ok, "\(text(shorter))")
            #expect(try await gateway.admin(.patch, path, token: operatorToken, json: ["mfa": NSNull()]).status == .ok)
            // Off, the app admin may turn it on.
            #expect(try await gateway.admin(.patch, path, token: appAdmin, json: ["mfa": [String: Int]()]).status == .ok)
        }
    }

    /// Issue 76: sessions may be the operator's policy too. The review's
    /// app admin lengthened them to a year with a grace of 300 and kept them
    /// through new passwords: each loosening is now 403 for an app admin,
    /// past the settings in place or, turning them on, past the defaults;
    /// tightening and turning them off stay theirs, and an operator may do
    /// anything.
    @Test func anAppAdminTightensSessionsButNeverLoosensThem() async throws {
        try await MemoryGateway.with { gateway in
            let app = try await gateway.createApp()
            let path = "/admin/v1/apps/\(app.appID)"
            let operatorToken = try await gateway.adminToken(.operator)
            let appAdmin = try await gateway.adminToken(.app(app.appID))
            let refused: [([String: any Sendable], String)] = [
                (["absolute_lifetime_seconds": 31_536_000], "Loosening sessions.absolute_lifetime_seconds"),
                (["idle_timeout_seconds": 30 * 86_400], "Loosening sessions.idle_timeout_seconds"),
                (["reuse_grace_seconds": 300], "Loosening sessions.reuse_grace_seconds"),
                (["max_sessions_per_user": 100], "Loosening sessions.max_sessions_per_user"),
                (["revoke_on_password_change": false], "Loosening sessions.revoke_on_password_change"),
            ]
            for (change, message) in refused {
                let response = try await gateway.admin(.patch, path, token: appAdmin, json: ["sessions": change])
                #expect(response.status == .forbidden, "\(change): \(text(response))")
                #expect((try errorBody(response)["message"] as? String)?.hasPrefix(message) == true, "\(text(response))")
            }
            // On with the defaults, then tighter, then off: the app admin's. Looser again is the operator's.
            #expect(try await gateway.admin(.patch, path, token: appAdmin, json: ["sessions": [String: Int]()]).status == .ok)
            let tighter = try await gateway.admin(.patch, path, token: appAdmin, json: ["sessions": ["reuse_grace_seconds": 0]])
            #expect(tighter.status == .ok, "\(text(tighter))")
            let back = try await gateway.admin(.patch, path, token: appAdmin, json: ["sessions": ["reuse_grace_seconds": 10]])
            #expect(back.status == .forbidden, "\(text(back))")
            #expect(try await gateway.admin(.patch, path, token: appAdmin, json: ["sessions": NSNull()]).status == .ok)
            let year = try await gateway.admin(
                .patch, path, token: operatorToken, json: ["sessions": ["absolute_lifetime_seconds": 31_536_000, "idle_timeout_seconds": 31_536_000]])
            #expect(year.status == .ok, "\(text(year))")
        }
    }

    /// Issue 76: turning an app's sessions off ends them, so turning them on
    /// again brings no old refresh token back to life.
    @Test func sessionsTurnedOffAndOnAgainBringNoRefreshTokenBack() async throws {
        try await MemoryGateway.with { gateway in
            let app = try await gateway.createSessionApp()
            let path = "/admin/v1/apps/\(app.appID)"
            let operatorToken = try await gateway.adminToken(.operator)
            var kept: [String] = []
            for _ in 0..<3 { kept.append(try #require(try await gateway.signIn(app).refreshToken)) }
            #expect(try await gateway.admin(.patch, path, token: operatorToken, json: ["sessions": NSNull()]).status == .ok)
            #expect(try await gateway.admin(.patch, path, token: operatorToken, json: ["sessions": [String: Int]()]).status == .ok)
            gateway.tenants.invalidate(app.appID)
            for token in kept {
                let refreshed = try await gateway.refresh(app, token)
                #expect(refreshed.status == .unauthorized, "\(refreshed.body)")
            }
            let ended = try await gateway.auditRows().filter { $0.event == "session.revoked" }
            #expect(ended.count == 1 && ended[0].text.contains("sessions_off"), "\(ended.map(\.text))")
            #expect(try await gateway.signIn(app).refreshToken != nil, "new sign-ins start sessions again")
        }
    }

    /// An override the operator set is the operator's: the app's admin may
    /// neither change (tighten included) nor remove it. Its own overrides it
    /// may tighten, never loosen or remove.
    @Test func anAppAdminCannotRemoveNorChangeAnOperatorsOverrideNorLoosenItsOwn() async throws {
        try await MemoryGateway.with { gateway in
            let app = try await gateway.createApp()
            let path = "/admin/v1/apps/\(app.appID)"
            let operatorToken = try await gateway.adminToken(.operator)
            let appAdmin = try await gateway.adminToken(.app(app.appID))
            let tight = ["user_failures": ["limit": 3, "period_seconds": 900]]
            #expect(try await gateway.admin(.patch, path, token: operatorToken, json: ["rate_limits": tight]).status == .ok)

            for change in [[String: [String: Int]](), ["user_failures": ["limit": 8, "period_seconds": 900]],
                           ["user_failures": ["limit": 2, "period_seconds": 900]]] {
                let refused = try await gateway.admin(.patch, path, token: appAdmin, json: ["rate_limits": change])
                #expect(refused.status == .forbidden, "\(change): \(text(refused))")
                #expect((try errorBody(refused)["message"] as? String)?.hasPrefix(
                    "rate_limits.user_failures was set by an operator") == true, "\(text(refused))")
            }
            let shown = try jsonObject(try await gateway.admin(.get, path, token: appAdmin))
            #expect(((shown["rate_limits"] as? [String: Any])?["user_failures"] as? [String: Any])?["limit"] as? Int == 3)
            #expect(shown["rate_limits_set_by_operator"] as? [String] == ["user_failures"])

            // Its own override, beside the operator's: tightened, never loosened nor removed.
            let own = ["user_failures": ["limit": 3, "period_seconds": 900], "ip": ["limit": 100, "period_seconds": 60]]
            #expect(try await gateway.admin(.patch, path, token: appAdmin, json: ["rate_limits": own]).status == .ok)
            let ownShown = try jsonObject(try await gateway.admin(.get, path, token: appAdmin))
            #expect(ownShown["rate_limits_set_by_operator"] as? [String] == ["user_failures"])
            var looser = own
            looser["ip"] = ["limit": 200, "period_seconds": 60]
            #expect(try await gateway.admin(.patch, path, token: appAdmin, json: ["rate_limits": looser]).status == .forbidden)
            let removed = try await gateway.admin(.patch, path, token: appAdmin, json: ["rate_limits": tight])
            #expect(removed.status == .forbidden)
            #expect((try errorBody(removed)["message"] as? String)?.hasPrefix("Removing rate_limits.ip") == true, "\(text(removed))")
            var tighter = own
            tighter["ip"] = ["limit": 50, "period_seconds": 60]
            #expect(try await gateway.admin(.patch, path, token: appAdmin, json: ["rate_limits": tighter]).status == .ok)
            #expect(try await gateway.admin(.patch, path, token: operatorToken, json: ["rate_limits": [String: Int]()]).status == .ok)
        }
    }

    /// Issue 56.2, as tried live: an operator's 5 tokens an hour, and the
    /// app's admin changing the period to 3 601, 3 602, 3 603 s between
    /// bursts to start each from empty. Counted: 5 tokens in all. And a change
    /// of period by the operator starts from the limit spent, never from empty
    /// (so does adding or removing an override of another period than the
    /// deployment's: `SlidingWindowBoundTests` counts the ramp).
    @Test func nobodyEscapesALimitByChangingItsPeriod() async throws {
        try await MemoryGateway.with { gateway in
            // As an operator's POST makes it: the override is the operator's, and no period changed.
            let app = try await gateway.createApp {
                $0.rateLimits = ["app": RateLimitOverride(limit: 5, periodSeconds: 3_600)]
                $0.rateLimitChanges = RateLimitChanges(setByOperator: ["app"])
            }
            let path = "/admin/v1/apps/\(app.appID)"
            let operatorToken = try await gateway.adminToken(.operator)
            let appAdmin = try await gateway.adminToken(.app(app.appID))
            func hourly(_ period: Int) -> [String: any Sendable] { ["rate_limits": ["app": ["limit": 5, "period_seconds": period]]] }
            func burst() async throws -> Int {
                var issued = 0
                for _ in 0..<5 where try await gateway.test({ try await $0.postJSON(aliceRequest(app)) }).status == .ok {
                    issued += 1
                }
                return issued
            }
            var issued = try await burst()
            for period in [3_601, 3_602, 3_603] {
                let refused = try await gateway.admin(.patch, path, token: appAdmin, json: hourly(period))
                #expect(refused.status == .forbidden, "\(period): \(text(refused))")
                issued += try await burst()
            }
            #expect(issued == 5)

            for period in [3_601, 3_602] {
                #expect(try await gateway.admin(.patch, path, token: operatorToken, json: hourly(period)).status == .ok)
                #expect(try await burst() == 0, "a new period of \(period) s started from empty")
            }
        }
    }

    @Test func theValidatorNamesTheAppWhoseKeySignedTheToken() async throws {
        try await MemoryGateway.with { gateway in
            let app = try await gateway.createApp()
            let issued = try await gateway.test { try await $0.postJSON(aliceRequest(app)) }
            let token = try #require(try jsonObject(issued)["identity_token"] as? String)
            let response = try await gateway.test {
                try await $0.postJSON(["identity_token": token], to: "/v1/identity_tokens/validate")
            }
            let body = try jsonObject(response)
            #expect(body["valid"] as? Bool == true)
            #expect(body["app_id"] as? String == app.appID.description)
        }
    }
}

/// Static test users' passwords are write-only, like the SMS senders'
/// secrets: the marker sent back keeps a user's password while the entry is
/// still that user's, and is refused once its user id changed.
@Suite struct StaticPasswordRedactionTests {
    @Test func theAdminAPINeverShowsAStaticPasswordAndTheMarkerKeepsOnlyItsUsers() async throws {
        try await MemoryGateway.with { gateway in
            let app = try await gateway.createApp()
            let token = try await gateway.adminToken(.app(app.appID))
            let shown = try await gateway.admin(.get, "/admin/v1/apps/\(app.appID)", token: token)
            #expect(shown.status == .ok)
            #expect(!text(shown).contains("wonderland"))
            #expect(text(shown).contains("********"))
            // Echoing what was shown keeps alice's password; it never becomes the marker.
            let echoed = try await gateway.admin(
                .patch, "/admin/v1/apps/\(app.appID)", token: token,
                json: ["plugins": ["static": ["users": [["user_id": "alice", "password": "********"]]]]])
            #expect(echoed.status == .ok, "\(text(echoed))")
            #expect(try await gateway.test { try await $0.postJSON(aliceRequest(app)) }.status == .ok)
            let markerAsPassword = aliceRequest(app).merging(["credentials": ["type": "static", "password": "********"]]) { $1 }
            #expect(try await gateway.test { try await $0.postJSON(markerAsPassword) }.status == .unauthorized)
            // The entry renamed: the marker no longer names anyone's password.
            let renamed = try await gateway.admin(
                .patch, "/admin/v1/apps/\(app.appID)", token: token,
                json: ["plugins": ["static": ["users": [["user_id": "mallory", "password": "********"]]]]])
            #expect(renamed.status == .badRequest)
            #expect(text(renamed).contains("users[0].password must be the secret itself"), "\(text(renamed))")
        }
    }
}
