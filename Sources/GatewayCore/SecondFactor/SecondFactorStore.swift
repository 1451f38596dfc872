public import Foundation

/// Users' second factors and the tickets of sign-ins waiting for one. Every
/// change that spends something (a ticket, a time step, a recovery code) is
/// conditional in the storage, so two replicas given the same code or
/// ticket at once let exactly one through.
public protocol SecondFactorStore: Sendable {
    /// The user's factor, confirmed or not; nil when they have none.
    func factor(of userID: String, in appID: AppID) async throws -> StoredSecondFactor?

    /// Starts an enrolment: a new factor, not confirmed, replacing one not
    /// confirmed yet, with its recovery codes' digests, and `row`. False
    /// (nothing written) when the user has a confirmed factor.
    func enrol(_ enrolment: SecondFactorEnrolment, recording row: AuditEvent) async throws -> Bool

    /// Confirms the factor `factorID` with the code of `step`, with `row`;
    /// false when it is gone or already confirmed.
    func confirm(_ factorID: UUID, step: Int64, recording row: AuditEvent) async throws -> Bool

    /// Replaces the confirmed factor's recovery codes, spending the code of
    /// `step` that allowed it, with `row`; false when it is gone, not
    /// confirmed, or that step was not later than its last.
    func replaceRecoveryCodes(
        of factorID: UUID, step: Int64, digests: [[UInt8]], recording row: AuditEvent
    ) async throws -> Bool

    /// Removes the user's factor and its codes, with `row`; false when they had none.
    func reset(_ userID: String, in appID: AppID, recording row: AuditEvent) async throws -> Bool

    /// Removes everything of a deleted user's: their factor and its codes
    /// (with `row`, when they had one) and the tickets of their sign-ins, so
    /// none completes, not even one that enrols a new factor; false when
    /// they had no factor.
    func forget(_ userID: String, in appID: AppID, recording row: AuditEvent) async throws -> Bool

    /// Ends the tickets of the user's sign-ins in progress, so none of them
    /// completes (the user was disabled, or given a new password), with
    /// `row` when there were any; how many ended.
    func endTickets(of userID: String, in appID: AppID, recording row: AuditEvent) async throws -> Int

    /// Keeps a new ticket (only its digest), for `lifetimeSeconds`.
    func issue(_ ticket: MFATicketGrant, lifetimeSeconds: Int) async throws

    /// The app's ticket whose digest is `digest` (spent and expired ones
    /// included), and the storage's clock at the reading.
    func ticket(_ digest: [UInt8], in appID: AppID) async throws -> (ticket: StoredMFATicket?, now: Date)

    /// Spends the ticket and the proof together, or neither: the ticket
    /// only while unspent and unexpired, a TOTP step only if later than the
    /// factor's last (confirming a factor not yet confirmed), a recovery
    /// code only if unused and its factor confirmed. Without a ticket (a
    /// route that asks the factor itself: a password recovery), the proof alone.
    func complete(
        ticket digest: [UInt8]?, in appID: AppID, factor factorID: UUID, proof: SecondFactorProof
    ) async throws -> SecondFactorCompletion
}

/// A user's TOTP factor as stored.
public struct StoredSecondFactor: Sendable, Equatable {
    public let appID: AppID
    public let userID: String
    public let factorID: UUID
    /// The TOTP secret, sealed under the master key (``TOTPSecret/sealed(under:for:in:)``).
    public let sealedSecret: [UInt8]
    public let createdAt: Date
    public let confirmedAt: Date?
    /// The last time step whose code was taken.
    public let lastStep: Int64?
    public let lastUsedAt: Date?
    /// Recovery codes not used yet.
    public let recoveryCodesLeft: Int

    public var isConfirmed: Bool { confirmedAt != nil }

    public init(
        appID: AppID, userID: String, factorID: UUID, sealedSecret: [UInt8], createdAt: Date, confirmedAt: Date?,
        lastStep: Int64?, lastUsedAt: Date?, recoveryCodesLeft: Int
    ) {
        self.appID = appID
        self.userID = userID
        self.factorID = factorID
        self.sealedSecret = sealedSecret
        self.createdAt = createdAt
        self.confirmedAt = confirmedAt
        self.lastStep = lastStep
        self.lastUsedAt = lastUsedAt
        self.recoveryCodesLeft = recoveryCodesLeft
    }
}

/// A new factor, as ``SecondFactorStore/enrol(_:recording:)`` writes it.
public struct SecondFactorEnrolment: Sendable {
    public let appID: AppID
    public let userID: String
    public let factorID: UUID
    public let sealedSecret: [UInt8]
    public let recoveryDigests: [[UInt8]]

    public init(appID: AppID, userID: String, factorID: UUID, sealedSecret: [UInt8], recoveryDigests: [[UInt8]]) {
        self.appID = appID
        self.userID = userID
        self.factorID = factorID
        self.sealedSecret = sealedSecret
        self.recoveryDigests = recoveryDigests
    }
}

/// What a ticket stands for: a sign-in of `userID` whose first factor was
/// right, for the token it would have had.
public struct MFATicketGrant: Sendable, Equatable {
    public let digest: [UInt8]
    public let appID: AppID
    public let userID: String
    /// The nonce of the challenge the first step answered: the second must answer the same.
    public let nonce: String
    /// The first factor's credential type and RFC 8176 methods.
    public let credentialType: String
    public let methods: [String]
    public let profile: UserProfile
    public let deviceLabel: String?

    public init(
        digest: [UInt8], appID: AppID, userID: String, nonce: String, credentialType: String, methods: [String],
        profile: UserProfile, deviceLabel: String?
    ) {
        self.digest = digest
        self.appID = appID
        self.userID = userID
        self.nonce = nonce
        self.credentialType = credentialType
        self.methods = methods
        self.profile = profile
        self.deviceLabel = deviceLabel
    }
}

/// A ticket as read back.
public struct StoredMFATicket: Sendable, Equatable {
    public let grant: MFATicketGrant
    public let expiresAt: Date
    public let spentAt: Date?

    public init(grant: MFATicketGrant, expiresAt: Date, spentAt: Date?) {
        self.grant = grant
        self.expiresAt = expiresAt
        self.spentAt = spentAt
    }
}

/// What completes a second step.
public enum SecondFactorProof: Sendable, Equatable {
    /// The TOTP code of this time step.
    case totp(step: Int64)
    /// The recovery code with this digest (``RecoveryCode/digest(of:)``).
    case recoveryCode(digest: [UInt8])
}

/// What ``SecondFactorStore/complete(ticket:in:factor:proof:)`` came to.
public enum SecondFactorCompletion: Sendable, Equatable {
    case completed
    /// The ticket was spent (by another request) or expired meanwhile.
    case ticketSpent
    /// The step or recovery code was spent (by another request), or the factor changed.
    case proofSpent
}
