import GatewayCore
import OpenSSLSigner
import Synchronization

/// Counts the RSA signatures a test's gateways make with their apps' keys
/// (every token's, whatever its profile), for tests of when a token is signed.
public final class SignatureCount: Sendable {
    private let made = Atomic<Int>(0)

    public init() {}

    /// Signatures made so far.
    public var value: Int { made.load(ordering: .acquiring) }

    /// An OpenSSL signer for `pair` whose signatures this counts.
    func signer(_ pair: RSAKeyPair) throws -> any RS256Signer {
        Counted(signer: try OpenSSLRS256Signer(pair), count: self)
    }

    private struct Counted: RS256Signer {
        let signer: OpenSSLRS256Signer
        let count: SignatureCount

        func sign(_ message: [UInt8]) throws -> [UInt8] {
            let signature = try signer.sign(message)
            count.made.add(1, ordering: .releasing)
            return signature
        }
    }
}
