@testable import GatewayCore

/// An imported private key: refused with a 400, or a key of 2048 to 4096
/// bits whose own PEM imports again to the same public key.
enum PrivateKeyPEMTarget {
    static func run(_ bytes: [UInt8]) throws(InvariantFailure) {
        guard let pem = text(bytes) else { return }
        let pair: RSAKeyPair
        switch Result(catching: { () throws(GatewayError) in try RSAKeyPair.imported(pem: pem) }) {
        case .success(let imported):
            pair = imported
        case .failure(let error):
            try invariant(error.kind == .invalidRequest && error.code == .invalidRequest, "import threw \(error)")
            return
        }
        try invariant((RSAKeyPair.minimumBits...RSAKeyPair.maximumImportedBits).contains(pair.bits), "\(pair.bits) bits")
        let again = try? RSAKeyPair.imported(pem: pair.privateKeyPEM)
        try invariant(again?.publicKeyPEM == pair.publicKeyPEM, "the key's own PEM imports to another key")
    }
}
