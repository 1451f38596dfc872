import Foundation
import GatewayCore
import GatewayHTTPTestSupport
import GatewayTestSupport
import HTTPTypes
import Testing

/// The `mfa` setting through the admin API, and the first step's answer
/// it leads to, with the stores in memory.
@Suite struct SecondFactorSettingsTests {
    @Test func theSettingIsTakenShownAndTurnedOff() async throws {
        let gateway = MemoryGateway()
        let token = try await gateway.operatorToken()
        let appID = try await gateway.createApp(token: token)
        let on = try await gateway.send(
            .patch, "/admin/v1/apps/\(appID)", token: token,
            json: ["mfa": ["requirement": "required", "ticket_lifetime_seconds": 120, "issuer": "Acme"] as [String: any Sendable]])
        #expect(on.status == .ok, "\(on.body)")
        let shown = try #require(on.body["mfa"] as? [String: Any])
        #expect(shown["requirement"] as? String == "required" && shown["ticket_lifetime_seconds"] as? Int == 120)
        #expect(shown["exempt_credential_types"] as? [String] == [] && shown["issuer"] as? String == "Acme")

        let off = try await gateway.send(.patch, "/admin/v1/apps/\(appID)", token: token, json: ["mfa": NSNull()])
        #expect(off.status == .ok)
        #expect(off.body["mfa"] == nil, "off: no mfa member")
    }

    @Test func badSettingsAre400sNamingTheField() async throws {
        let gateway = MemoryGateway()
        let token = try await gateway.operatorToken()
        let appID = try await gateway.createApp(token: token)
        let cases: [([String: any Sendable], String)] = [
            (["requirement": "always"], "mfa.requirement"),
            (["ticket_lifetime_seconds": 5], "ticket_lifetime_seconds"),
            (["ticket_lifetime_seconds": 3600], "ticket_lifetime_seconds"),
            (["issuer": ""], "mfa.issuer"),
            (["issuer": String(repeating: "x", count: 65)], "mfa.issuer"),
            (["exempt_credential_types": ["carrier_pigeon"]], "mfa.exempt_credential_types"),
            (["code_digits": 8], "code_digits"),
        ]
        for (settings, field) in cases {
            let refused = try await gateway.send(.patch, "/admin/v1/apps/\(appID)", token: token, json: ["mfa": settings])
            #expect(refused.status == .badRequest, "\(settings)")
            #expect((refused.body["message"] as? String)?.contains(field) == true, "\(settings): \(refused.body)")
        }
    }

    /// With the second factor required, a user with none gets no token
    /// for their first factor: 403 `mfa_enrollment_required`, a ticket, and a row that says so.
    @Test func aRequiredFactorTurnsARightFirstFactorIntoATicket() async throws {
        let gateway = MemoryGateway()
        let token = try await gateway.operatorToken()
        let appID = try await gateway.createApp(token: token)
        _ = try await gateway.send(.post, "/admin/v1/apps/\(appID)/keys", token: token, json: ["generate": [:] as [String: Int]])
        _ = try await gateway.send(
            .patch, "/admin/v1/apps/\(appID)", token: token, json: ["mfa": ["requirement": "required"] as [String: any Sendable]])
        let first = try await gateway.send(
            .post, "/v1/identity_tokens", json: ["app_id": appID, "user_id": "ada", "nonce": "n-1", "credentials": ["type": "static"]])
        #expect(first.status == .forbidden)
        #expect(first.body["error"] as? String == "mfa_enrollment_required")
        #expect(first.body["identity_token"] == nil)
        #expect((first.body["mfa_ticket"] as? String).flatMap(MFATicket.init(text:)) != nil)
        #expect(first.headers[.cacheControl] == "no-store")
        let row = try #require(gateway.memory.events.last)
        #expect(row.event == "token.denied" && row.reason == "mfa_enrollment_required" && row.userID == "ada")
        #expect(!String(describing: row).contains(first.body["mfa_ticket"] as? String ?? "-"))
    }
}
