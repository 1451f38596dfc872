@testable import GatewayCore

/// An imported private key: refused with a 400, or a key of 2048 to 4096
/// bits whose own PEM imports again to the same public key.
enum PrivateKeyPEMTarget {
    static func run(_ bytes: [UInt8]) {
        guard let pem = text(bytes) else { return }
        let pair: RSAKeyPair
        do {
            pair = try RSAKeyPair.imported(pem: pem)
        } catch {
            invariant(error.kind == .invalidRequest && error.code == .invalidRequest, "import threw \(error)")
            return
        }
        invariant((RSAKeyPair.minimumBits...RSAKeyPair.maximumImportedBits).contains(pair.bits), "\(pair.bits) bits")
        let again = try? RSAKeyPair.imported(pem: pair.privateKeyPEM)
        invariant(again?.publicKeyPEM == pair.publicKeyPEM, "the key's own PEM imports to another key")
    }
}
