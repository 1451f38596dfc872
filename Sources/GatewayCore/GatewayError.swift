/// A failure the gateway reports to its caller: a stable code, an HTTP status
/// and a sentence for humans. The message never carries a secret.
public struct GatewayError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Stable, snake_case identifiers clients may switch on. Plugins add
    /// their own in extensions.
    public struct Code: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        public static let invalidRequest = Code(rawValue: "invalid_request")
        public static let unsupportedMediaType = Code(rawValue: "unsupported_media_type")
        public static let payloadTooLarge = Code(rawValue: "payload_too_large")
        public static let unknownApp = Code(rawValue: "unknown_app")
        public static let appDisabled = Code(rawValue: "app_disabled")
        public static let unsupportedCredentialType = Code(rawValue: "unsupported_credential_type")
        public static let credentialTypeNotAllowed = Code(rawValue: "credential_type_not_allowed")
        public static let invalidCredentials = Code(rawValue: "invalid_credentials")
        public static let noSigningKey = Code(rawValue: "no_signing_key")
        public static let notFound = Code(rawValue: "not_found")
        public static let unauthorized = Code(rawValue: "unauthorized")
        public static let insufficientScope = Code(rawValue: "insufficient_scope")
        public static let conflict = Code(rawValue: "conflict")
        public static let keyActive = Code(rawValue: "key_active")
        public static let rateLimited = Code(rawValue: "rate_limited")
        public static let methodNotAllowed = Code(rawValue: "method_not_allowed")
        public static let unavailable = Code(rawValue: "unavailable")
        public static let busy = Code(rawValue: "busy")
        public static let internalError = Code(rawValue: "internal_error")
    }

    public let code: Code
    /// The HTTP status this error is answered with.
    public let status: Int
    public let message: String
    /// Response headers that belong with this error, e.g. `Retry-After`.
    public var headers: [(name: String, value: String)] = []

    public init(_ code: Code, status: Int, _ message: String) {
        self.code = code
        self.status = status
        self.message = message
    }

    public static func == (lhs: GatewayError, rhs: GatewayError) -> Bool {
        lhs.code == rhs.code && lhs.status == rhs.status && lhs.message == rhs.message
    }

    public var description: String { "\(code) (\(status)): \(message)" }
}

extension GatewayError {
    /// 400 `invalid_request`; the message names the offending field.
    public static func invalidRequest(_ message: String) -> GatewayError {
        GatewayError(.invalidRequest, status: 400, message)
    }

    /// 401 `invalid_credentials`: one answer for every kind of mismatch, so the
    /// caller cannot tell an unknown user from a wrong secret.
    public static let invalidCredentials = GatewayError(
        .invalidCredentials, status: 401, "The credentials do not match a user of this app.")

    /// 503 `unavailable`: a dependency (the database) cannot be reached.
    public static let unavailable = GatewayError(
        .unavailable, status: 503, "The service is temporarily unavailable; retry shortly.")

    /// 503 `busy`: too much CPU-heavy work (password hashing, key generation) is queued
    /// already; answered at once rather than after a long wait.
    public static var busy: GatewayError {
        var error = GatewayError(.busy, status: 503, "The server is busy; retry in a moment.")
        error.headers = [("Retry-After", "1")]
        return error
    }

    /// 500 `internal_error`: an unexpected failure; details go to the log only.
    public static let internalError = GatewayError(
        .internalError, status: 500, "An internal error occurred.")
}
