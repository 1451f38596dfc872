import Crypto
import Foundation
@testable import GatewayCore
import GatewayPluginKit
@testable import IDTokenPlugin

/// The ID-token plugin's parsers: a provider's JWK set and a client's ID
/// token. The first byte picks which. A key set that parses holds 1 to 32
/// keys, each under a non-empty kid; a token that parses never verifies
/// under a key it was not signed with, whatever its header and claims say.
enum IDTokenTarget {
    static let provider = try! IDTokenProvider(
        JSONInput(members: ["name": .string("fuzz"), "issuer": .string("https://id.fuzz.example"), "audiences": .array([.string("client")])]),
        path: "fuzz", environment: .production)
    static let key: ProviderKey = .p256(P256.Signing.PrivateKey().publicKey)

    static func run(_ bytes: [UInt8]) throws(InvariantFailure) {
        guard let first = bytes.first else { return }
        let rest = Array(bytes.dropFirst())
        if first & 1 == 0 {
            guard let keys = try? ProviderKeySet(json: rest) else { return }
            try invariant((1...ProviderKeySet.maximumKeys).contains(keys.keys.count), "\(keys.keys.count) keys")
            try invariant(keys.keys.keys.allSatisfy { !$0.isEmpty }, "an empty kid")
        } else {
            guard let compact = text(rest), let token = try? UnverifiedIDToken(compact) else { return }
            try invariant(["RS256", "ES256"].contains(token.algorithm), "algorithm \(token.algorithm)")
            let verified = try? token.verify(with: key, provider: provider, requestNonce: "n", now: Date())
            try invariant(verified == nil, "a fuzzed token verified")
        }
    }
}
