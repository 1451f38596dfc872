import Foundation
import GatewayCore
import GatewayPluginKit

/// Registration of a user's passkey, for whoever may ask (the user's live
/// session, or the app's admin API): the options with a challenge bound to
/// the app and the user, then the authenticator's response checked
/// (``PasskeyCeremonies/register(clientData:attestationObject:credentialID:relyingParty:)``)
/// and the passkey stored with its row.
struct PasskeyRegistrar: Sendable {
    let store: any PasskeyStore

    /// WebAuthn's `PublicKeyCredentialCreationOptionsJSON`, which
    /// `PublicKeyCredential.parseCreationOptionsFromJSON` and the platforms'
    /// passkey APIs take as they are. A discoverable credential (so sign-in
    /// needs no user id), no attestation, and the user's passkeys excluded.
    func creationOptions(for userID: String, in appID: AppID, options: PasskeyOptions) async throws -> JSONValue {
        let challenge = PasskeyChallenge.generate()
        try await store.keepChallenge(
            PasskeyChallenge.digest(challenge), for: .registration, userID: userID, in: appID,
            lifetimeSeconds: options.challengeLifetimeSeconds)
        let existing = try await store.passkeys(of: userID, in: appID)
        let party = options.relyingParty
        let algorithms: [COSEKey.Algorithm] = [.es256, .edDSA, .rs256].filter(party.algorithms.contains)
        return .object([
            "challenge": .string(Base64URL.encode(challenge)),
            "rp": .object(["id": .string(party.id), "name": .string(options.name)]),
            "user": .object([
                "id": .string(Base64URL.encode(PasskeyUserHandle.of(userID, in: appID))),
                "name": .string(userID), "displayName": .string(userID),
            ]),
            "pubKeyCredParams": .array(
                algorithms.map { .object(["type": .string("public-key"), "alg": .number(Double($0.rawValue))]) }),
            "timeout": .number(Double(options.challengeLifetimeSeconds * 1000)),
            "excludeCredentials": .array(
                existing.map { .object(["type": .string("public-key"), "id": .string(Base64URL.encode($0.credentialID))]) }),
            "authenticatorSelection": .object([
                "residentKey": .string("required"), "requireResidentKey": .bool(true),
                "userVerification": .string(party.requiresUserVerification ? "required" : "preferred"),
            ]),
            "attestation": .string("none"),
        ])
    }

    /// The fields a registration sends besides who asks.
    static let fields: Set<String> = ["name", "credential_id", "client_data_json", "attestation_object"]

    /// Checks the response in `input` for `userID` and stores the passkey
    /// with `row` (its outcome success), bound to the one-factor session
    /// `boundTo` if one added it (``StoredPasskey/oneFactorSessionID``). A
    /// refusal throws the error to answer, its reason in `refusal`.
    func register(
        _ input: JSONInput, for userID: String, in appID: AppID, options: PasskeyOptions, boundTo oneFactorSession: UUID?,
        row: AuditEvent, refusal: inout String?
    ) async throws -> StoredPasskey {
        let name = try Self.name(input) ?? "Passkey"
        func refuse(_ reason: PasskeyRefusal) -> GatewayError {
            refusal = reason.auditReason
            return GatewayError(.passkeyRejected, .invalidRequest, Self.explanation(reason))
        }
        guard let clientDataJSON = PasskeyField.bytes(try input.requiredString("client_data_json")),
            let attestationObject = PasskeyField.bytes(try input.requiredString("attestation_object"))
        else { throw refuse(.malformed) }
        var credentialID: [UInt8]?
        if let text = try input.string("credential_id") {
            guard let bytes = PasskeyField.bytes(text) else { throw refuse(.malformed) }
            credentialID = bytes
        }
        let clientData: ClientData
        do { clientData = try ClientData(bytes: clientDataJSON) } catch { throw refuse(error) }
        let spent = try await store.spendChallenge(PasskeyChallenge.digest(clientData.challenge), for: .registration, in: appID)
        guard spent.spent, spent.userID == userID else { throw refuse(.challenge) }
        let credential: RegisteredCredential
        do {
            credential = try PasskeyCeremonies.register(
                clientData: clientData, attestationObject: attestationObject, credentialID: credentialID,
                relyingParty: options.relyingParty)
        } catch {
            throw refuse(error)
        }
        let passkey = StoredPasskey(
            credentialID: credential.credentialID, userID: userID, name: name, publicKey: credential.publicKey,
            algorithm: Int(credential.algorithm.rawValue), signCount: credential.signCount,
            backupEligible: credential.backupEligible, backedUp: credential.backedUp,
            aaguid: UUID(uuid: credential.aaguid.withUnsafeBytes { $0.loadUnaligned(as: uuid_t.self) }),
            attestationFormat: credential.attestationFormat,
            createdAt: Date(), lastUsedAt: nil, oneFactorSessionID: oneFactorSession)
        var row = row
        if let oneFactorSession { row.detail["one_factor_session_id"] = oneFactorSession.lowercasedText }
        row.detail["credential_id"] = Base64URL.encode(passkey.credentialID)
        row.detail["attestation_format"] = passkey.attestationFormat
        switch try await store.add(passkey, in: appID, recording: row) {
        case .added:
            return passkey
        case .duplicate:
            refusal = PasskeyRefusal.duplicate.auditReason
            throw GatewayError(.conflict, .conflict, "That passkey is registered already.")
        case .tooMany:
            refusal = "passkey_limit"
            throw GatewayError(
                .conflict, .conflict, "This user has \(PasskeyStoreLimits.maximumPerUser) passkeys; revoke one first.")
        }
    }

    /// A passkey's name: 1 to 64 characters, no control characters.
    static func name(_ input: JSONInput) throws(GatewayError) -> String? {
        guard let name = try input.string("name") else { return nil }
        guard (1...64).contains(name.count), !name.unicodeScalars.contains(where: { $0.properties.generalCategory == .control })
        else { throw .invalidRequest("name must be 1 to 64 characters without control characters.") }
        return name
    }

    /// What a registration's refusal tells the developer: the check, not the bytes.
    static func explanation(_ reason: PasskeyRefusal) -> String {
        switch reason {
        case .malformed: "The response is not base64url, or its client data, attestation object or authenticator data cannot be read."
        case .type: "The client data's type is not webauthn.create."
        case .challenge: "The challenge is not one this gateway gave for this user's registration, or it was used or has expired."
        case .origin: "The origin is not one of the app's (plugins.passkey.origins and its Android apps), or the page was framed."
        case .relyingParty: "The passkey was made for another rp_id."
        case .userPresence: "The authenticator did not test that the user was present."
        case .userVerification: "This app requires user verification and the authenticator did not verify the user."
        case .algorithm: "The passkey's algorithm is not one this app accepts."
        case .attestation: "The attestation format is not one WebAuthn registers, or format none came with a statement."
        case .credentialData: "The attested credential is missing, or is not the credential_id sent."
        case .duplicate: "That passkey is registered already."
        case .unknownCredential, .userHandle, .signature, .counter: "The passkey was refused."
        }
    }
}

enum PasskeyStoreLimits {
    /// A user has at most this many passkeys (a phone, a laptop, keys...); the stores enforce it.
    static let maximumPerUser = 20
}

extension GatewayError.Code {
    /// 400: a passkey registration's response failed a check; the message says which.
    static let passkeyRejected = GatewayError.Code(rawValue: "passkey_rejected")
}
