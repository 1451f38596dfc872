import Foundation
public import GatewayCore
public import GatewayPluginKit

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

    /// What a user's change does to their second factor: a deletion
    /// removes the factor, its recovery codes and the tickets of their
    /// sign-ins in progress (an `mfa.reset` row); any other change ends
    /// the tickets (an `mfa.tickets_ended` row), so a first factor checked
    /// before the user was disabled or given a new password completes into
    /// no token. A new address changes nothing here. Each row's `detail.reason` is the change's.
    var hearer: UserLifecycle.Hearer {
        { [store] change in
            switch change.kind {
            case .deleted:
                let row = change.row("mfa.reset", credentialType: Self.totpType)
                return try await store.forget(change.userID, in: change.appID, recording: row) ? 1 : 0
            case .emailChanged:
                return 0
            case .disabled, .passwordChanged, .sessionsEnded:
                let row = change.row("mfa.tickets_ended", credentialType: Self.totpType)
                return try await store.endTickets(of: change.userID, in: change.appID, recording: row)
            }
        }
    }

    /// What a verified first factor of `userID` (its own methods
    /// `signInMethods`, if its verifier says them) still owes under `settings`.
    func demand(
        _ settings: SecondFactorSettings, credentialType: String, signInMethods: [String]?, userID: String, in appID: AppID
    ) async throws -> SecondFactorDemand {
        // An exempt first factor needs no read.
        guard !settings.exempts(credentialType, signInMethods: signInMethods) else { return .nothing }
        let factor = try await store.factor(of: userID, in: appID)
        return settings.demand(credentialType: credentialType, signInMethods: signInMethods, factor: factor)
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

    /// The app's ticket the client's `text` names, and why it is refused,
    /// if it is (malformed, unknown, spent, expired). The ticket comes back
    /// with a refusal too when one was found, for the row to name its user.
    func read(ticket text: String?, in appID: AppID) async throws -> (ticket: StoredMFATicket?, refusal: String?) {
        guard let text, let ticket = MFATicket(text: text) else { return (nil, SecondFactorRefusal.ticketMalformed) }
        let (found, now) = try await store.ticket(ticket.digest, in: appID)
        guard let found else { return (nil, SecondFactorRefusal.ticketUnknown) }
        if found.spentAt != nil { return (found, SecondFactorRefusal.ticketSpent) }
        if now >= found.expiresAt { return (found, SecondFactorRefusal.ticketExpired) }
        return (found, nil)
    }

    /// What `code` is for `factor` at `date`: the step it takes, or why it is refused.
    func check(_ code: String, for factor: StoredSecondFactor, at date: Date) throws -> Result<Int64, CodeRefusal> {
        let secret = try TOTPSecret(unsealing: factor.sealedSecret, under: masterKey, for: factor.userID, in: factor.appID)
        if let step = TOTP.acceptedStep(of: code, for: secret, at: date, after: factor.lastStep) { return .success(step) }
        // A code of a step already taken is as wrong as any other, but its row says which it was.
        if let lastStep = factor.lastStep, let step = TOTP.acceptedStep(of: code, for: secret, at: date, after: nil),
            step <= lastStep
        {
            return .failure(CodeRefusal(reason: SecondFactorRefusal.codeReplayed))
        }
        return .failure(CodeRefusal(reason: SecondFactorRefusal.codeInvalid))
    }

    /// A TOTP code refused, with the row's reason.
    struct CodeRefusal: Error {
        let reason: String
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

extension SecondFactors: SecondFactorProofs {
    public func hasConfirmedFactor(_ userID: String, in app: AppSettings) async throws -> Bool {
        try await store.factor(of: userID, in: app.appID)?.isConfirmed ?? false
    }

    public func spend(_ code: String, kind: String, of userID: String, in app: AppSettings) async throws -> String? {
        guard let factor = try await store.factor(of: userID, in: app.appID), factor.isConfirmed else {
            return SecondFactorRefusal.noFactor
        }
        let proof: SecondFactorProof
        switch kind {
        case Self.totpType:
            switch try check(code, for: factor, at: Date()) {
            case .success(let step): proof = .totp(step: step)
            case .failure(let refusal): return refusal.reason
            }
        case Self.recoveryCodeType:
            guard let digest = RecoveryCode.digest(of: code) else { return SecondFactorRefusal.recoveryCodeInvalid }
            proof = .recoveryCode(digest: digest)
        default:
            return SecondFactorRefusal.codeInvalid
        }
        switch try await store.complete(ticket: nil, in: app.appID, factor: factor.factorID, proof: proof) {
        case .completed: return nil
        case .ticketSpent, .proofSpent:
            return kind == Self.totpType ? SecondFactorRefusal.codeReplayed : SecondFactorRefusal.recoveryCodeInvalid
        }
    }
}
