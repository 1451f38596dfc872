public import GatewayCore

/// One channel's live codes (one per app and address), in PostgreSQL
/// (``PostgresCodeStore``) or in memory (``MemoryCodeStore``).
public protocol CodeStore<Address>: Sendable {
    associatedtype Address: CodeAddress

    /// Stores a new code for the address, replacing an older one, unless a
    /// live code went out less than `resendAfterSeconds` ago; of two
    /// concurrent requests for one address, at most one stores. With
    /// `message`, the code's message is queued in the outbox by the same
    /// statement: a code is never stored without its message, nor a message
    /// queued without its code. Returns `nil` when stored, otherwise the
    /// seconds until a new code may be sent.
    func storeUnlessTooSoon(
        code mac: [UInt8], for address: Address, in appID: AppID, attempts: Int, lifetimeSeconds: Int,
        resendAfterSeconds: Int, queueing message: OutboxMessage?
    ) async throws -> Int?

    /// Forgets the address's code (its delivery failed, its user changed); whether there was one.
    @discardableResult
    func discardCode(for address: Address, in appID: AppID) async throws -> Bool

    /// Checks `mac` against the live code; concurrent checks of one code see
    /// each other: at most one is accepted, and every wrong one spends a try.
    /// With `keepingOnMatch`, a right code is answered `.accepted` and left
    /// live (a step that must pass before the code is spent: a second
    /// factor); only a check without it spends the code.
    func check(_ mac: [UInt8], for address: Address, in appID: AppID, keepingOnMatch: Bool) async throws -> CodeCheck
}

extension CodeStore {
    /// Checks `mac` and spends the code when it is right.
    public func check(_ mac: [UInt8], for address: Address, in appID: AppID) async throws -> CodeCheck {
        try await check(mac, for: address, in: appID, keepingOnMatch: false)
    }
}

extension CodeStore {
    /// Stores a code that is delivered by the request itself (nothing queued).
    public func storeUnlessTooSoon(
        code mac: [UInt8], for address: Address, in appID: AppID, attempts: Int, lifetimeSeconds: Int,
        resendAfterSeconds: Int
    ) async throws -> Int? {
        try await storeUnlessTooSoon(
            code: mac, for: address, in: appID, attempts: attempts, lifetimeSeconds: lifetimeSeconds,
            resendAfterSeconds: resendAfterSeconds, queueing: nil)
    }
}

/// What checking a code against the stored one found.
public enum CodeCheck: Sendable, Equatable {
    /// It matched; the code is gone now (single use).
    case accepted
    /// It did not match; `attemptsLeft` more tries before the code dies.
    case wrong(attemptsLeft: Int)
    /// No live code: never sent, expired, used or out of tries.
    case noCode

    /// The audit reason of a check that did not sign in; nil for `.accepted`.
    public var refusalReason: String? {
        switch self {
        case .accepted: nil
        case .wrong(let left): left == 0 ? "bad_code_exhausted" : "bad_code"
        case .noCode: "no_live_code"
        }
    }
}

/// A channel's code table: `(app_id, <address column>, code_hmac,
/// attempts_left, sent_at, expires_at)` with `(app_id, <address column>)` as
/// its key, made by the channel plugin's migration.
public protocol CodeTable: Sendable {
    associatedtype Address: CodeAddress
    /// `phone_codes`, `email_codes`: also the prefix of its prepared statements' names.
    static var name: String { get }
    /// `phone_number`, `email`.
    static var addressColumn: String { get }
}
