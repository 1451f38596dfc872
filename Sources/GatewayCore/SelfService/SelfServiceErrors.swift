extension GatewayError.Code {
    /// 403: the app does not offer this self-service flow (`self_service`).
    public static let selfServiceOff = GatewayError.Code(rawValue: "self_service_off")
    /// 403: the session's sign-in is older than `self_service.recent_sign_in_seconds`; sign in again.
    public static let recentSignInRequired = GatewayError.Code(rawValue: "recent_sign_in_required")
}

extension GatewayError {
    /// 403 `self_service_off`: the app does not offer this to its users.
    public static let selfServiceOff = GatewayError(
        .selfServiceOff, .forbidden, "This app does not offer this to its users (self_service).")

    /// 403 `recent_sign_in_required`: the session signed in longer ago than `seconds`.
    public static func recentSignInRequired(within seconds: Int) -> GatewayError {
        GatewayError(.recentSignInRequired, .forbidden, "This session signed in more than \(seconds) seconds ago; sign in again first.")
    }
}
