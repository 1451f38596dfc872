import Crypto
import Foundation
import GatewayCore
public import PasskeyPlugin

/// A passkey provider in software, as the tests' client: it makes
/// registrations and assertions the way WebAuthn Level 3 says platforms
/// do, and each part can be bent for an attack (``Flags``, the client
/// data's members, the counter, the attestation statement).
public struct SoftwareAuthenticator: Sendable {
    public enum Algorithm: Sendable { case es256, edDSA }

    public struct Flags: OptionSet, Sendable {
        public let rawValue: UInt8
        public init(rawValue: UInt8) { self.rawValue = rawValue }
        public static let userPresent = Flags(rawValue: 0x01)
        public static let userVerified = Flags(rawValue: 0x04)
        public static let backupEligible = Flags(rawValue: 0x08)
        public static let backedUp = Flags(rawValue: 0x10)
        public static let attested = Flags(rawValue: 0x40)
        /// A synced passkey after a verified unlock, as iCloud Keychain and Google Password Manager send.
        public static let synced: Flags = [.userPresent, .userVerified, .backupEligible, .backedUp]
    }

    /// What a registration sends (`PublicKeyCredential.toJSON()`, flattened).
    public struct Registration: Sendable {
        public var clientDataJSON: [UInt8]
        public var attestationObject: [UInt8]
        public var credentialID: [UInt8]
    }

    /// What an assertion sends.
    public struct Assertion: Sendable {
        public var clientDataJSON: [UInt8]
        public var authenticatorData: [UInt8]
        public var signature: [UInt8]
        public var userHandle: [UInt8]
        public var credentialID: [UInt8]
    }

    public let algorithm: Algorithm
    public let credentialID: [UInt8]
    private let p256: P256.Signing.PrivateKey
    private let ed25519: Curve25519.Signing.PrivateKey

    public init(_ algorithm: Algorithm = .es256, credentialID: [UInt8] = (0..<16).map { _ in .random(in: 0...255) }) {
        self.algorithm = algorithm
        self.credentialID = credentialID
        p256 = P256.Signing.PrivateKey()
        ed25519 = Curve25519.Signing.PrivateKey()
    }

    /// The credential's public key as a COSE key (canonical CBOR).
    public var coseKey: [UInt8] {
        switch algorithm {
        case .es256:
            let point = Array(p256.publicKey.x963Representation)
            return CBORValue.map([
                CBORMapEntry(.integer(1), .integer(2)), CBORMapEntry(.integer(3), .integer(-7)),
                CBORMapEntry(.integer(-1), .integer(1)), CBORMapEntry(.integer(-2), .bytes(Array(point[1..<33]))),
                CBORMapEntry(.integer(-3), .bytes(Array(point[33..<65]))),
            ]).encoded
        case .edDSA:
            return CBORValue.map([
                CBORMapEntry(.integer(1), .integer(1)), CBORMapEntry(.integer(3), .integer(-8)),
                CBORMapEntry(.integer(-1), .integer(6)), CBORMapEntry(.integer(-2), .bytes(Array(ed25519.publicKey.rawRepresentation))),
            ]).encoded
        }
    }

    /// Client data as a browser serializes it; `extra` members are appended as given (raw JSON).
    public static func clientData(
        type: String, challenge: [UInt8], origin: String, crossOrigin: Bool = false, extra: String = ""
    ) -> [UInt8] {
        Array(
            #"{"type":"\#(type)","challenge":"\#(Base64URL.encode(challenge))","origin":"\#(origin)","crossOrigin":\#(crossOrigin)\#(extra)}"#
                .utf8)
    }

    /// Authenticator data for `rpID` (the hash of the RP ID, then flags and counter, then the attested credential).
    public func authenticatorData(rpID: String, flags: Flags, signCount: UInt32, attested: Bool) -> [UInt8] {
        var data = Array(SHA256.hash(data: Array(rpID.utf8)))
        data.append(flags.union(attested ? .attested : []).rawValue)
        data += withUnsafeBytes(of: signCount.bigEndian) { Array($0) }
        if attested {
            data += [UInt8](repeating: 0, count: 16)  // AAGUID: none, as with attestation "none"
            data += [UInt8(credentialID.count >> 8), UInt8(credentialID.count & 0xFF)] + credentialID
            data += coseKey
        }
        return data
    }

    public func sign(_ data: [UInt8]) -> [UInt8] {
        switch algorithm {
        case .es256: Array(try! p256.signature(for: data).derRepresentation)
        case .edDSA: Array(try! ed25519.signature(for: data))
        }
    }

    /// A registration for `challenge` at `origin`, attestation `none` unless `format`/`statement` say otherwise.
    public func register(
        challenge: [UInt8], rpID: String, origin: String, flags: Flags = .synced, type: String = "webauthn.create",
        format: String = "none", statement: [CBORMapEntry] = [], clientData: [UInt8]? = nil, attested: Bool = true
    ) -> Registration {
        let object = CBORValue.map([
            CBORMapEntry(.text("fmt"), .text(format)), CBORMapEntry(.text("attStmt"), .map(statement)),
            CBORMapEntry(
                .text("authData"), .bytes(authenticatorData(rpID: rpID, flags: flags, signCount: 0, attested: attested))),
        ])
        return Registration(
            clientDataJSON: clientData ?? Self.clientData(type: type, challenge: challenge, origin: origin),
            attestationObject: object.encoded, credentialID: credentialID)
    }

    /// An assertion for `challenge` at `origin`, signed over authenticator data ‖ SHA-256(client data).
    public func assert(
        challenge: [UInt8], rpID: String, origin: String, userHandle: [UInt8], signCount: UInt32 = 0,
        flags: Flags = .synced, type: String = "webauthn.get", crossOrigin: Bool = false, attested: Bool = false
    ) -> Assertion {
        let clientData = Self.clientData(type: type, challenge: challenge, origin: origin, crossOrigin: crossOrigin)
        let data = authenticatorData(rpID: rpID, flags: flags, signCount: signCount, attested: attested)
        return Assertion(
            clientDataJSON: clientData, authenticatorData: data,
            signature: sign(data + Array(SHA256.hash(data: clientData))), userHandle: userHandle, credentialID: credentialID)
    }
}
