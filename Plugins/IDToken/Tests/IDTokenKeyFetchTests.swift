import Foundation
import GatewayCore
import GatewayHTTPTestSupport
import GatewayPluginKit
import GatewayOutbound
import GatewayTestSupport
import HTTPTypes
import HummingbirdTesting
@testable import IDTokenPlugin
import Logging
import Testing

/// How the providers' keys are fetched, counted at the provider.
@Suite struct IDTokenKeyFetchTests {
    /// 200 tokens with made-up `kid`s, 20 at a time: each is refused, and
    /// the provider's keys are fetched once more at most (the refetch
    /// interval is a minute).
    @Test func madeUpKeyIDsCannotMakeTheGatewayHammerTheProvider() async throws {
        try await TestProvider.with { provider in
            try await TestGateway.with(plugins: idTokenPlugins()) { gateway in
                let audience = try await provider.clientID("ios")
                let app = try await gateway.createIDTokenApp(
                    [["name": "corp", "issuer": provider.base, "audiences": [audience]]],
                    rateLimits: ["ip": RateLimitOverride(limit: 1000, periodSeconds: 60)])
                let nonce = "layer-nonce-\(UUID())"
                // The keys are in memory after one good login.
                #expect(try await gateway.idTokenLogin(app, token: try await provider.idToken(subject: "ada", nonce: nonce), nonce: nonce).status == .ok)
                let fetchesBefore = try await provider.keyFetches()
                #expect(fetchesBefore >= 1)

                let claims = providerClaims(issuer: provider.base, audience: audience, nonce: nonce)
                var tokens: [String] = []
                for index in 0..<200 { tokens.append(try await provider.signed(claims, key: "stranger", header: ["kid": "made-up-\(index)"])) }
                let statuses = try await withThrowingTaskGroup(of: HTTPResponse.Status.self) { group in
                    var statuses: [HTTPResponse.Status] = []
                    for (index, token) in tokens.enumerated() {
                        if index >= 20, let status = try await group.next() { statuses.append(status) }
                        group.addTask { try await gateway.idTokenLogin(app, token: token, nonce: nonce).status }
                    }
                    for try await status in group { statuses.append(status) }
                    return statuses
                }
                #expect(statuses.count == 200)
                #expect(statuses.allSatisfy { $0 == .unauthorized }, "\(Set(statuses.map(\.code)))")
                let refetches = try await provider.keyFetches() - fetchesBefore
                #expect(refetches <= 1, "200 made-up kids fetched the keys \(refetches) times")
                let reasons = try await gateway.auditRows().filter { $0.event == "token.denied" }.compactMap(\.reason)
                #expect(reasons.filter { $0 == "id_token_unknown_key" }.count == 200)
            }
        }
    }

    /// The provider signs with a new key: the first token of it fetches the
    /// keys again and signs in; a token of the retired key then fails its
    /// signature check. (This provider names no `kid` in its tokens, so the
    /// gateway checks a token against the provider's one key, and fetches
    /// again when that fails.)
    @Test func aRotatedKeyIsFetchedWhenATokenNamesIt() async throws {
        try await TestProvider.with { provider in
            try await MemoryGateway.with(plugins: idTokenPlugins(refetchInterval: .zero)) { gateway in
                let audience = try await provider.clientID("ios")
                let app = try await gateway.createIDTokenApp([["name": "corp", "issuer": provider.base, "audiences": [audience]]])
                let nonce = "layer-nonce-\(UUID())"
                let beforeRotation = try await provider.idToken(subject: "old", nonce: nonce)
                #expect(try await gateway.idTokenLogin(app, token: try await provider.idToken(subject: "ada", nonce: nonce), nonce: nonce).status == .ok)
                let fetches = try await provider.keyFetches()

                try await provider.rotateKeys()
                let afterRotation = try await provider.idToken(subject: "bob", nonce: nonce)
                let signedIn = try await gateway.idTokenLogin(app, token: afterRotation, nonce: nonce)
                #expect(signedIn.status == .ok, "\(text(signedIn))")
                #expect(try await provider.keyFetches() == fetches + 1)

                let retired = try await gateway.idTokenLogin(app, token: beforeRotation, nonce: nonce)
                #expect(retired.status == .unauthorized)
                #expect(try await gateway.auditReason(of: retired) == "id_token_signature")
            }
        }
    }

    /// With no keys to be had the answer is 502, never 401 and never a token;
    /// while the provider stays down the gateway does not ask again for the
    /// backoff; once it is back, logins work.
    @Test func aProviderThatIsDownIsA502AndIsAskedAgainOnlyAfterTheBackoff() async throws {
        try await TestProvider.with { provider in
            try await MemoryGateway.with(plugins: idTokenPlugins(failureBackoff: .seconds(3600))) { gateway in
                let audience = try await provider.clientID("ios")
                let app = try await gateway.createIDTokenApp([["name": "corp", "issuer": provider.base, "audiences": [audience]]])
                let nonce = "layer-nonce-\(UUID())"
                try await provider.goDown()
                for index in 0..<20 {
                    let response = try await gateway.idTokenLogin(app, token: try await provider.idToken(subject: "u\(index)", nonce: nonce), nonce: nonce)
                    #expect(response.status == .badGateway, "\(text(response))")
                    #expect(identityToken(in: response) == nil)
                    if index == 0 { #expect(try await gateway.auditReason(of: response) == "id_token_provider_unavailable") }
                }
                // The discovery document was asked for once; the 19 others were answered from the backoff.
                let stats = try await HTTPCall.send("GET", provider.base + "/test/stats").json
                #expect(stats["discovery_fetches"] as? Int == 1, "\(stats)")
            }
            try await MemoryGateway.with(plugins: idTokenPlugins(failureBackoff: .zero)) { gateway in
                let audience = try await provider.clientID("ios")
                let app = try await gateway.createIDTokenApp([["name": "corp", "issuer": provider.base, "audiences": [audience]]])
                let nonce = "layer-nonce-\(UUID())"
                #expect(try await gateway.idTokenLogin(app, token: try await provider.idToken(subject: "a", nonce: nonce), nonce: nonce).status == .badGateway)
                try await provider.comeUp()
                #expect(try await gateway.idTokenLogin(app, token: try await provider.idToken(subject: "b", nonce: nonce), nonce: nonce).status == .ok)
            }
        }
    }

    /// Without the operator's `id_token.allow_private_addresses`, an app's
    /// key URLs on this machine are never fetched, whichever way they are
    /// given: an app admin cannot make the gateway call the operator's network.
    @Test func privateKeyAddressesAreRefusedUnlessTheOperatorAllowsThem() async throws {
        try await TestProvider.with { provider in
            try await MemoryGateway.with(plugins: idTokenPlugins(failureBackoff: .zero, allowsPrivateAddresses: false)) { gateway in
                let audience = try await provider.clientID("ios")
                for keys in [["jwks_url": provider.base + "/jwks"], ["discovery_url": provider.base + "/.well-known/openid-configuration"], [:]] {
                    var options: [String: any Sendable] = ["name": "corp", "issuer": provider.base, "audiences": [audience]]
                    options.merge(keys) { $1 }
                    let app = try await gateway.createIDTokenApp([options])
                    let nonce = "layer-nonce-\(UUID())"
                    let refused = try await gateway.idTokenLogin(
                        app, token: try await provider.idToken(subject: "a", nonce: nonce), nonce: nonce)
                    #expect(refused.status == .badGateway, "\(keys): \(text(refused))")
                    #expect(identityToken(in: refused) == nil)
                }
                let stats = try await HTTPCall.send("GET", provider.base + "/test/stats").json
                #expect(stats["jwks_fetches"] as? Int == 0, "\(stats)")
                #expect(stats["discovery_fetches"] as? Int == 0, "\(stats)")
            }
        }
    }

    /// A discovery document must speak for the provider's issuer (OpenID
    /// Connect Discovery 1.0, 4.3): one naming another is not taken, and its
    /// `jwks_uri` is never fetched. The same keys through the provider's own
    /// document sign in.
    @Test func aDiscoveryDocumentOfAnotherIssuerIsNotTaken() async throws {
        try await TestProvider.with { provider in
            try await MemoryGateway.with(plugins: idTokenPlugins(failureBackoff: .zero)) { gateway in
                let audience = try await provider.clientID("ios")
                let imposter = try await gateway.createIDTokenApp([[
                    "name": "corp", "issuer": provider.base, "audiences": [audience],
                    "discovery_url": provider.base + "/imposter/.well-known/openid-configuration",
                ]])
                let nonce = "layer-nonce-\(UUID())"
                let refused = try await gateway.idTokenLogin(
                    imposter, token: try await provider.idToken(subject: "a", nonce: nonce), nonce: nonce)
                #expect(refused.status == .badGateway, "\(text(refused))")
                #expect(identityToken(in: refused) == nil)
                #expect(try await gateway.auditReason(of: refused) == "id_token_provider_unavailable")
                #expect(try await provider.keyFetches() == 0)

                let genuine = try await gateway.createIDTokenApp([[
                    "name": "corp", "issuer": provider.base, "audiences": [audience],
                    "discovery_url": provider.base + "/.well-known/openid-configuration",
                ]])
                let signedIn = try await gateway.idTokenLogin(
                    genuine, token: try await provider.idToken(subject: "b", nonce: nonce), nonce: nonce)
                #expect(signedIn.status == .ok, "\(text(signedIn))")
                #expect(try await provider.keyFetches() == 1)
            }
        }
    }

    /// Keys fetched before the provider went down stay in use: logins go on,
    /// and a refetch that fails (a new kid) keeps them.
    @Test func theLastGoodKeysStayInUseWhileTheProviderIsDown() async throws {
        try await TestProvider.with { provider in
            try await MemoryGateway.with(plugins: idTokenPlugins(refetchInterval: .zero, failureBackoff: .zero)) { gateway in
                let audience = try await provider.clientID("ios")
                let app = try await gateway.createIDTokenApp([["name": "corp", "issuer": provider.base, "audiences": [audience]]])
                let nonce = "layer-nonce-\(UUID())"
                #expect(try await gateway.idTokenLogin(app, token: try await provider.idToken(subject: "a", nonce: nonce), nonce: nonce).status == .ok)
                try await provider.goDown()
                let claims = providerClaims(issuer: provider.base, audience: audience, nonce: nonce)
                let unknown = try await gateway.idTokenLogin(
                    app, token: try await provider.signed(claims, key: "stranger", header: ["kid": "new-kid"]), nonce: nonce)
                #expect(unknown.status == .unauthorized)
                #expect(try await gateway.idTokenLogin(app, token: try await provider.idToken(subject: "b", nonce: nonce), nonce: nonce).status == .ok)
                try await provider.comeUp()
            }
        }
    }
}

/// The key cache is each app's own: one app cannot fail, throttle or crowd
/// out another's keys.
@Suite struct IDTokenKeyIsolationTests {
    /// App A's fetch fails while the provider is down, which holds A back for
    /// the backoff; app B, naming the same provider once it is back, is not held back.
    @Test func oneAppsFailedFetchDoesNotHoldBackAnotherAppsLogins() async throws {
        try await TestProvider.with { provider in
            try await MemoryGateway.with(plugins: idTokenPlugins(failureBackoff: .seconds(3600))) { gateway in
                let audience = try await provider.clientID("ios")
                let corp: [String: any Sendable] = ["name": "corp", "issuer": provider.base, "audiences": [audience]]
                let first = try await gateway.createIDTokenApp([corp])
                let second = try await gateway.createIDTokenApp([corp])
                let nonce = "layer-nonce-\(UUID())"
                try await provider.goDown()
                let failed = try await gateway.idTokenLogin(first, token: try await provider.idToken(subject: "a", nonce: nonce), nonce: nonce)
                #expect(failed.status == .badGateway)
                try await provider.comeUp()
                let other = try await gateway.idTokenLogin(second, token: try await provider.idToken(subject: "b", nonce: nonce), nonce: nonce)
                #expect(other.status == .ok, "\(text(other))")
                // The first app stays within its own backoff.
                let held = try await gateway.idTokenLogin(first, token: try await provider.idToken(subject: "c", nonce: nonce), nonce: nonce)
                #expect(held.status == .badGateway)
            }
        }
    }

    /// An app naming ever new key URLs keeps at most its share of entries; another app's stay.
    @Test func anAppCyclingKeyURLsHoldsAtMostItsShare() async throws {
        let keys = ProviderKeys(outbound: OutboundHTTP(addresses: OutboundAddressPolicy(allowsPrivateAddresses: true)))
        let logger = Logger(label: "test")
        let kept = IDTokenProvider.KeyLocation.jwks(URL(string: "http://127.0.0.1:9/kept")!)
        _ = try? await keys.keys(kept, for: "other-app", logger: logger)
        for index in 0..<(3 * ProviderKeys.entriesPerApp) {
            let location = IDTokenProvider.KeyLocation.jwks(URL(string: "http://127.0.0.1:9/\(index)")!)
            _ = try? await keys.keys(location, for: "cycling-app", logger: logger)
        }
        #expect(keys.entryCount(for: "cycling-app") == ProviderKeys.entriesPerApp)
        #expect(keys.entryCount(for: "other-app") == 1)
    }
}
