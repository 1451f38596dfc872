@testable import GatewayCore

/// The validation endpoint's token parser: any text gives a report without
/// crashing; a report is valid only with a signature the key made, which
/// fuzzed text never carries; a token that parses keeps its signing input.
enum IdentityTokenTarget {
    static let publicKeyPEM: String = try! RSAKeyPair.generate(bits: 2048).publicKeyPEM

    static func run(_ bytes: [UInt8]) throws(InvariantFailure) {
        guard let compact = text(bytes) else { return }
        var report = TokenValidationReport(compact: compact)
        if report.isValid {
            try invariant(report.keyLookup != nil, "a valid shape without a key to look up")
        }
        report.checkSignature(publicKeyPEM: publicKeyPEM)
        try invariant(!report.isValid, "a fuzzed token verified")
        if let token = ParsedIdentityToken(compact: compact) {
            try invariant(compact.hasPrefix(String(decoding: token.signingInput, as: UTF8.self) + "."), "signing input")
        }
    }
}
