/// A failure the gateway reports to its caller: a stable code, the kind of
/// failure it is and a sentence for humans. The message never carries a
/// secret. The HTTP layer answers each kind with its status
/// (`ErrorResponder` in GatewayPluginKit); the domain names no status code.
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
        public static let unsupportedTokenProfile = Code(rawValue: "unsupported_token_profile")
        public static let credentialTypeNotAllowed = Code(rawValue: "credential_type_not_allowed")
        public static let invalidCredentials = Code(rawValue: "invalid_credentials")
        public static let noSigningKey = Code(rawValue: "no_signing_key")
        public static let credentialServiceUnavailable = Code(rawValue: "credential_service_unavailable")
        public static let notFound = Code(rawValue: "not_found")
        public static let unauthorized = Code(rawValue: "unauthorized")
        public static let insufficientScope = Code(rawValue: "insufficient_scope")
        public static let conflict = Code(rawValue: "conflict")
        public static let keyActive = Code(rawValue: "key_active")
        public static let rateLimited = Code(rawValue: "rate_limited")
        /// 429: the app's budget of sends on a channel is spent (``RateLimitPolicy/budgetChannel``).
        public static let sendBudgetExhausted = Code(rawValue: "send_budget_exhausted")
        public static let methodNotAllowed = Code(rawValue: "method_not_allowed")
        public static let unavailable = Code(rawValue: "unavailable")
        public static let busy = Code(rawValue: "busy")
        public static let internalError = Code(rawValue: "internal_error")
    }

    /// What went wrong, as far as the caller is concerned.
    public enum Kind: Sendable, Equatable {
        /// The request is malformed or names something it may not (400).
        case invalidRequest
        /// The caller did not prove who it is (401).
        case unauthenticated
        /// The caller may not do this (403).
        case forbidden
        case notFound
        /// The path exists, but not with this method (405).
        case methodNotAllowed
        /// It clashes with what is stored (409).
        case conflict
        case tooLarge
        case unsupportedMediaType
        /// A limit refused it (429).
        case tooManyRequests
        /// A bug or an unexpected failure (500).
        case internalFailure
        /// A service the gateway called (an SMS provider, a tenant's webhook) failed (502).
        case upstreamFailure
        /// The gateway cannot answer now: the database, the load (503).
        case unavailable
    }

    public let code: Code
    public let kind: Kind
    public let message: String
    /// How long the caller should wait before trying again, where that is known.
    public var retryAfterSeconds: Int?

    public init(_ code: Code, _ kind: Kind, _ message: String, retryAfterSeconds: Int? = nil) {
        self.code = code
        self.kind = kind
        self.message = message
        self.retryAfterSeconds = retryAfterSeconds
    }

    public var description: String { "\(code) (\(kind)): \(message)" }
}

extension GatewayError {
    /// 400 `invalid_request`; the message names the offending field.
    public static func invalidRequest(_ message: String) -> GatewayError {
        GatewayError(.invalidRequest, .invalidRequest, message)
    }

    /// 401 `invalid_credentials`: one answer for every kind of mismatch, so the
    /// caller cannot tell an unknown user from a wrong secret.
    public static let invalidCredentials = GatewayError(
        .invalidCredentials, .unauthenticated, "The credentials do not match a user of this app.")

    /// 503 `unavailable`: a dependency (the database) cannot be reached.
    public static let unavailable = GatewayError(
        .unavailable, .unavailable, "The service is temporarily unavailable; retry shortly.")

    /// 503 `busy`: too much CPU-heavy work (password hashing, key generation) is queued
    /// already; answered at once rather than after a long wait.
    public static let busy = GatewayError(
        .busy, .unavailable, "The server is busy; retry in a moment.", retryAfterSeconds: 1)

    /// 500 `internal_error`: an unexpected failure; details go to the log only.
    public static let internalError = GatewayError(
        .internalError, .internalFailure, "An internal error occurred.")
}
