public import GatewayCore

/// A verifier whose app asks a human check (a CAPTCHA) on the token route
/// before the credential is checked (the password plugin's `human_check`).
/// The token route asks it once the request's limits allowed it; a check
/// that is not passed is no failure of the credential, so the units the
/// request reserved are given back and nothing counts against the user.
public protocol HumanCheckedVerifier: CredentialVerifier {
    /// Throws what the client is answered when a check is due and not
    /// passed (403 `human_check_required` or `human_check_failed`, 503
    /// `human_check_unavailable`), noting why in the request's row.
    func checkHuman(_ credentials: Credentials, _ passage: inout PublicRequest) async throws(GatewayError)
}
