/// Produces RSASSA-PKCS1-v1_5 signatures with SHA-256 (JWS `RS256`). A signer
/// holds one parsed private key for the key's whole life and may be called
/// from many tasks at once.
public protocol RS256Signer: Sendable {
    /// Signs `message` (the JWS signing input) and returns the raw signature.
    func sign(_ message: [UInt8]) throws -> [UInt8]
}
