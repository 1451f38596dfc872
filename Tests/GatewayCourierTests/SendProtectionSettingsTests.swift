import Foundation
import GatewayCore
@testable import GatewayCourier
import GatewayPluginKit
import Testing

/// Send protection's settings, its country table and its reading of a
/// provider's answer, without I/O.
@Suite struct SendProtectionSettingsTests {
    static let check: [String: JSONValue] = [
        "provider": .string("turnstile"), "secret": .string("0x4AAAAAAA-secret"),
        "hostnames": .array([.string("App.Example.com")]), "action": .string("send_code"),
    ]

    static func read(_ members: [String: JSONValue]?, sms: Bool = true) throws(GatewayError) -> SendProtection {
        try SendProtection(members.map { JSONInput(members: $0, path: "plugins.phone_code.send_protection") }, path: "plugins.phone_code", sms: sms)
    }

    @Test func theCountryOfANumberComesFromItsCallingCode() {
        let cases: [(String, String?)] = [
            ("+12125550123", "US"), ("+14165550123", "CA"), ("+18765550123", "JM"), ("+17875550123", "PR"),
            ("+77012345678", "KZ"), ("+79161234567", "RU"), ("+447700900123", "GB"), ("+4915112345678", "DE"),
            ("+35312345678", "IE"), ("+882161234567", "001"), ("+8613800138000", "CN"), ("+2348012345678", "NG"),
            ("+99912345678", nil), ("+2812345678", nil),
        ]
        for (number, country) in cases { #expect(CallingCodes.country(of: number) == country, "\(number)") }
        #expect(CallingCodes.knownCountries.isSuperset(of: ["US", "CA", "JM", "KZ", "GB", "001"]))
        #expect(!CallingCodes.knownCountries.contains("ZZ"))
    }

    @Test func smsIsProtectedByTheBreakerByDefaultAndEmailByNothing() throws {
        #expect(try Self.read(nil) == SendProtection(breaker: SendProtection.Breaker()))
        #expect(try Self.read(nil, sms: false) == SendProtection())
        #expect(try Self.read(["breaker": .bool(false)]).breaker == nil)
        let check = try #require(try Self.read(["human_check": .object(Self.check)]).humanCheck)
        #expect(check.hostnames == ["app.example.com"] && check.mode == .always && !check.failOpen && check.timeoutMilliseconds == 3000)
        #expect(check.verifyURL == SendProtection.HumanCheck.Provider.turnstile.verifyURL)
    }

    @Test func wrongSettingsAreRefusedNamingTheMember() {
        let wrong: [([String: JSONValue], String)] = [
            (["countries": .object(["allow": .array([.string("DE")]), "deny": .array([.string("FR")])])], "countries"),
            (["countries": .object(["allow": .array([.string("ZZ")])])], "'ZZ'"),
            (["human_check": .object(Self.check.merging(["hostnames": .array([])]) { $1 })], "hostnames"),
            (["human_check": .object(Self.check.merging(["provider": .string("recaptcha")]) { $1 })], "provider"),
            (["human_check": .object(Self.check.merging(["secret": .string("********")]) { $1 })], "secret"),
            (["human_check": .object(Self.check.merging(["mode": .string("sometimes")]) { $1 })], "mode"),
            (["breaker": .object(["prefix_digits": .number(2)])], "prefix_digits"),
            (["breaker": .string("on")], "breaker"),
            (["pumping": .bool(true)], "pumping"),
        ]
        for (members, named) in wrong {
            #expect {
                _ = try Self.read(members)
            } throws: { error in
                (error as? GatewayError)?.message.contains(named) == true
            }
        }
        // Email takes the human check alone.
        #expect(throws: GatewayError.self) { _ = try Self.read(["breaker": .bool(false)], sms: false) }
    }

    @Test func anAppAdminMayTightenButNotLoosen() throws {
        let stored = try Self.read([
            "human_check": .object(Self.check), "countries": .object(["allow": .array([.string("DE"), .string("FR")])]),
            "breaker": .object(["minimum_sends": .number(30)]),
        ])
        var tighter = stored
        tighter.countries = .allow(["DE"])
        tighter.breaker?.minimumSends = 10
        tighter.breaker?.openSeconds = 86_400
        #expect(tighter.loosening(of: stored) == nil)
        var looser = stored
        looser.countries = .allow(["DE", "FR", "GB"])
        #expect(looser.loosening(of: stored) == "countries.allow")
        looser = stored
        looser.breaker?.surgeFactor = 10
        #expect(looser.loosening(of: stored) == "breaker.surge_factor")
        looser = stored
        looser.humanCheck?.failOpen = true
        #expect(looser.loosening(of: stored) == "human_check.fail_open")
        looser = stored
        looser.humanCheck?.hostnames.append("other.example")
        #expect(looser.loosening(of: stored) == "human_check.hostnames")
        looser = stored
        looser.humanCheck?.verifyURL = URL(string: "https://verifier.example/siteverify")!
        #expect(looser.loosening(of: stored) == "human_check.verify_url")
        // A check turned on that asks elsewhere than the provider is an operator's too.
        var fresh = SendProtection()
        fresh.humanCheck = looser.humanCheck
        #expect(fresh.loosening(of: SendProtection()) == "human_check.verify_url")
    }

    @Test func theBreakersThresholdIsTheLargerOfItsMinimumAndTheSurgeOverTheBaseline() {
        let breaker = SendProtection.Breaker(minimumSends: 50, surgeFactor: 4)
        #expect(breaker.threshold(baselineCount: 0) == 50)
        // 24 windows averaging 100 sends: 4 × 100.
        #expect(breaker.threshold(baselineCount: 2400) == 400)
        #expect(breaker.threshold(baselineCount: 2401) == 401)
        #expect(breaker.prefix(of: "+4915112345678") == "+491511")
    }

    @Test func aProvidersAnswerIsHeldToTheAppsHostsAndAction() throws {
        let check = try #require(try Self.read(["human_check": .object(Self.check)]).humanCheck)
        let now = Date()
        func verdict(_ json: String) -> SendGuard.Verdict { SendGuard.verdict(Array(json.utf8), check, now: now) }
        let stamp = ISO8601DateFormatter().string(from: now.addingTimeInterval(-10))
        #expect(verdict(#"{"success":true,"hostname":"app.example.com","action":"send_code","challenge_ts":"\#(stamp)"}"#) == .passed)
        #expect(verdict(#"{"success":true,"hostname":"APP.example.com","action":"send_code"}"#) == .passed)
        #expect(verdict(#"{"success":true,"hostname":"evil.example","action":"send_code"}"#) == .refused("hostname_mismatch"))
        #expect(verdict(#"{"success":true,"hostname":"app.example.com","action":"login"}"#) == .refused("action_mismatch"))
        let old = ISO8601DateFormatter().string(from: now.addingTimeInterval(-301))
        #expect(verdict(#"{"success":true,"hostname":"app.example.com","action":"send_code","challenge_ts":"\#(old)"}"#) == .refused("expired"))
        #expect(verdict(#"{"success":false,"error-codes":["timeout-or-duplicate"]}"#) == .refused("timeout-or-duplicate"))
        #expect(verdict(#"{"success":false,"error-codes":["already-seen-response","expired-input-response"]}"#)
            == .refused("already-seen-response,expired-input-response"))
        #expect(verdict(#"{"success":false}"#) == .refused("refused"))
        #expect(verdict("<html>") == .unavailable("unreadable answer"))
        #expect(SendGuard.timestamp("2026-12-07T10:00:00.123Z") != nil && SendGuard.timestamp("2026-12-07T10:00:00Z") != nil)
    }
}
