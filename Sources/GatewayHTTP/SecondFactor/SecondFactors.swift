import Foundation
public import GatewayCore

/// What the token path and the enrolment routes need of second factors:
/// their store, and the master key TOTP secrets are sealed under.
public struct SecondFactors: Sendable {
    let store: any SecondFactorStore
    let masterKey: MasterKey

    public init(store: any SecondFactorStore, masterKey: MasterKey) {
        self.store = store
        self.masterKey = masterKey
    }

    /// The credential types of a sign-in's second step.
    public static let totpType = "totp"
    public static let recoveryCodeType = "recovery_code"
    public static let credentialTypes: Set<String> = [totpType, recoveryCodeType]

    /// What a verified first factor of `userID` still owes under `settings`.
    func demand(
        _ settings: SecondFactorSettings, credentialType: String, userID: String, in appID: AppID
    ) async throws -> SecondFactorDemand {
        // An exempt first factor needs no read.
        guard !settings.exemptCredentialTypes.contains(credentialType) else { return .nothing }
        let factor = try await store.factor(of: userID, in: appID)
        return settings.demand(credentialType: credentialType, factor: factor)
    }

    /// A new ticket for `grant`'s sign-in, kept before it is shown.
    func challenge(
        _ demand: SecondFactorDemand, settings: SecondFactorSettings, grant: (MFATicket) -> MFATicketGrant
    ) async throws -> SecondFactorChallenge {
        let ticket = MFATicket()
        try await store.issue(grant(ticket), lifetimeSeconds: settings.ticketLifetimeSeconds)
        return SecondFactorChallenge(
            ticket: ticket, expiresInSeconds: settings.ticketLifetimeSeconds, needsEnrolment: demand == .enrolment)
    }

    /// The secret of `factor`.
    func secret(of factor: StoredSecondFactor) throws -> TOTPSecret {
        try TOTPSecret(unsealing: factor.sealedSecret, under: masterKey, for: factor.userID, in: factor.appID)
    }

    /// A new factor for `userID`, not confirmed: its secret and recovery
    /// codes as the user is shown them once, or nil when they have a
    /// confirmed one already.
    func enrol(
        _ userID: String, in app: AppSettings, recording row: AuditEvent
    ) async throws -> NewSecondFactor? {
        let secret = TOTPSecret.generate()
        let codes = RecoveryCode.generate()
        let enrolment = SecondFactorEnrolment(
            appID: app.appID, userID: userID, factorID: UUID(),
            sealedSecret: try secret.sealed(under: masterKey, for: userID, in: app.appID),
            recoveryDigests: codes.compactMap(RecoveryCode.digest(of:)))
        guard try await store.enrol(enrolment, recording: row) else { return nil }
        let issuer = app.mfa?.issuer ?? app.name
        return NewSecondFactor(secret: secret.base32, uri: secret.uri(issuer: issuer, account: userID), recoveryCodes: codes)
    }
}

/// The answer to a sign-in whose first factor was right and which owes a
/// second: 403 `mfa_required` (or `mfa_enrollment_required`) with a ticket.
public struct SecondFactorChallenge: Sendable {
    public let ticket: MFATicket
    public let expiresInSeconds: Int
    /// The user has no factor and the app requires one: enrol first (`POST /v1/mfa/totp` with the ticket).
    public let needsEnrolment: Bool
}

/// A factor as its user is shown it, once.
struct NewSecondFactor: Encodable {
    let secret: String
    let uri: String
    let recoveryCodes: [String]

    enum CodingKeys: String, CodingKey {
        case secret
        case uri = "otpauth_uri"
        case recoveryCodes = "recovery_codes"
    }
}
