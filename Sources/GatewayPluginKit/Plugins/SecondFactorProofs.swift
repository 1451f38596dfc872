public import GatewayCore

/// A user's second factor as a plugin's route asks it, where email access
/// alone must not be enough (a password recovery): whether the user has a
/// confirmed factor, and one of its codes checked and spent.
public protocol SecondFactorProofs: Sendable {
    /// Whether `userID` has a confirmed second factor in `app`.
    func hasConfirmedFactor(_ userID: String, in app: AppSettings) async throws -> Bool

    /// Checks `code` against the user's confirmed factor and spends it (a
    /// TOTP step once, a recovery code once, on every replica): nil when
    /// accepted, else the refusal's audit reason. `kind` is `totp` or
    /// `recovery_code`.
    func spend(_ code: String, kind: String, of userID: String, in app: AppSettings) async throws -> String?
}
