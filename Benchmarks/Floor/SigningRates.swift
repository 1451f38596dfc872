import Dispatch
import Foundation
import GatewayCore
import OpenSSLSigner

/// `token-floor --signing-rates SECONDS`: RS256 signatures a second on the
/// calling thread (one core) with each signer the gateway has, over the key
/// in `FLOOR_KEY_FILE` and a Layer token's signing input, so the load script
/// can set each server's CPU a token beside its own library's signature
/// (docs/performance.md). Prints `{"openssl": …, "swift_crypto": …}`.
enum SigningRates {
    static func measure(keyPEM: String, seconds: Double) throws -> [String: Double] {
        let signers: [(String, any RS256Signer)] = [
            ("openssl", try OpenSSLRS256Signer(privateKeyPEM: keyPEM)),
            ("swift_crypto", try RSAKeyPair(pem: keyPEM).signer),
        ]
        // About the size of a Layer token's header and claims, base64url.
        let message = Array(repeating: UInt8(ascii: "e"), count: 420)
        var rates: [String: Double] = [:]
        for (name, signer) in signers {
            _ = try signer.sign(message)
            let started = DispatchTime.now().uptimeNanoseconds
            var signatures = 0
            var elapsed = 0.0
            repeat {
                _ = try signer.sign(message)
                signatures += 1
                elapsed = Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9
            } while elapsed < seconds
            rates[name] = (Double(signatures) / elapsed * 10).rounded() / 10
        }
        return rates
    }
}
