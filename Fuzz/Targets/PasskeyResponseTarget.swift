import Crypto
import PasskeyPlugin

/// What a passkey ceremony reads from a client, each part in turn the
/// fuzzer's bytes: as an attestation object, a registration is refused or
/// yields a credential whose stored key reads back; as client data, it is
/// read within its limit or refused; as an assertion's authenticator data
/// (and signature) under a key that never signed them, it never verifies.
enum PasskeyResponseTarget {
    static let party = RelyingParty(
        id: "example.com", origins: ["https://example.com"], requiresUserVerification: false,
        algorithms: [.es256, .rs256, .edDSA])
    static let challenge = [UInt8](repeating: 0x2A, count: 32)
    static let registration = clientData("webauthn.create")
    static let assertion = clientData("webauthn.get")
    /// A key of no authenticator: nothing the fuzzer writes is signed by it.
    static let key: [UInt8] = {
        let point = Array(P256.Signing.PrivateKey().publicKey.x963Representation)
        return CBORValue.map([
            CBORMapEntry(.integer(1), .integer(2)), CBORMapEntry(.integer(3), .integer(-7)), CBORMapEntry(.integer(-1), .integer(1)),
            CBORMapEntry(.integer(-2), .bytes(Array(point[1..<33]))), CBORMapEntry(.integer(-3), .bytes(Array(point[33..<65]))),
        ]).encoded
    }()

    static func clientData(_ type: String) -> [UInt8] {
        Array(#"{"type":"\#(type)","challenge":"KioqKioqKioqKioqKioqKioqKioqKioqKioqKioqKio","origin":"https://example.com"}"#.utf8)
    }

    static func run(_ bytes: [UInt8]) throws(InvariantFailure) {
        let created = try? ClientData(bytes: registration)
        let asked = try? ClientData(bytes: assertion)
        guard let created, let asked else { throw InvariantFailure(description: "the fixed client data is refused") }
        try invariant(created.challenge == challenge, "the fixed challenge reads otherwise")

        if let registered = try? PasskeyCeremonies.register(
            clientData: created, attestationObject: bytes, credentialID: nil, relyingParty: party)
        {
            try invariant(registered.credentialID.count <= AuthenticatorData.maximumCredentialIDBytes, "a credential id over the limit")
            try invariant((try? COSEKey(bytes: registered.publicKey)) != nil, "a registered key that does not read back")
            try invariant(party.algorithms.contains(registered.algorithm), "a key of an algorithm the party refuses")
        }
        if (try? ClientData(bytes: bytes)) != nil {
            try invariant(bytes.count <= ClientData.maximumBytes, "client data over its limit was read")
        }
        let verified = try? PasskeyCeremonies.assert(
            clientData: asked, clientDataJSON: assertion, authenticatorData: bytes, signature: Array(bytes.suffix(72)),
            credential: CredentialRecord(publicKey: key, signCount: 0), relyingParty: party)
        try invariant(verified == nil, "an assertion no key signed was verified")
    }
}
