import Foundation
import GatewayCore
import GatewayPluginKit

/// The parts of a Google service account's JSON key file a custom token
/// needs: who signs (`client_email`), with which key (`private_key_id`,
/// `private_key`). Read from the file's object as an admin sends it, or from
/// its text as storage keeps it (sealed, then opened).
struct ServiceAccount: Sendable {
    let clientEmail: String
    let privateKeyID: String
    let signer: any RS256Signer
    let publicKeyPEM: String

    private static let path = "\(FirebaseProfile.path).service_account"

    /// - Parameter makeSigner: the deployment's signer for the account's key.
    init(_ value: JSONValue?, makeSigner: (RSAKeyPair) throws -> any RS256Signer) throws(GatewayError) {
        let members: [String: JSONValue]
        switch value {
        case .object(let object)?:
            members = object
        case .string(let text)? where text != RedactedSecret.marker:
            guard case .object(let object)? = try? JSONCoding.value(text) else {
                throw .invalidRequest("\(Self.path) must be the service account's JSON key file, as an object.")
            }
            members = object
        default:
            throw .invalidRequest(
                "\(Self.path) is required: the service account's JSON key file, as an object; the admin API never shows it, so send it again when changing these settings."
            )
        }
        let reader = JSONInput(members: members, path: Self.path)
        if let type = try reader.string("type"), type != "service_account" {
            throw .invalidRequest("\(Self.path).type must be service_account.")
        }
        clientEmail = try reader.token(
            "client_email", bytes: 3...256, allowed: { $0 > 0x20 && $0 < 0x7F }, what: "the service account's email address")
        guard clientEmail.contains("@") else { throw .invalidRequest("\(Self.path).client_email must be an email address.") }
        privateKeyID = try reader.token(
            "private_key_id", bytes: 1...128, allowed: { $0 > 0x20 && $0 < 0x7F }, what: "the id of the service account's key")
        let pem = try reader.requiredString("private_key")
        do {
            let pair = try RSAKeyPair.imported(pem: pem)
            publicKeyPEM = pair.publicKeyPEM
            signer = try makeSigner(pair)
        } catch {
            throw .invalidRequest("\(Self.path).private_key must be one RSA private key in PEM, 2048 to 4096 bits.")
        }
    }

    /// The JSON text of a service account object, keys sorted: how it is sealed.
    static func text(of value: JSONValue) -> String {
        String(decoding: JSONCoding.bytes(of: value), as: UTF8.self)
    }
}
