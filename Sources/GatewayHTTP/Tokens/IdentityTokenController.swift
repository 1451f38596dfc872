import CoreMetrics
import GatewayCore
public import GatewayPluginKit
public import Hummingbird
import HTTPTypes
import NIOCore

/// `POST /v1/identity_tokens` (and Layer's sample paths `/identity_tokens`,
/// `/authenticate`): asks the ``TokenIssuer`` and answers its outcome, the
/// token or the error, with the request's `RateLimit` headers, and counts it
/// in `gateway_tokens_total`.
public struct IdentityTokenController: Sendable {
    public static let paths: [RouterPath] = ["/v1/identity_tokens", "/identity_tokens", "/authenticate"]

    private let issuer: TokenIssuer

    public init(issuer: TokenIssuer) {
        self.issuer = issuer
    }

    public func addRoutes(to router: Router<GatewayRequestContext>) {
        for path in Self.paths {
            router.post(path) { request, context in try await self.respond(to: request, context: context) }
        }
    }

    func respond(to request: Request, context: GatewayRequestContext) async throws -> Response {
        let outcome = await issuer.issue(request, context: context)
        Self.tokens[
            TokenLabels(
                app: outcome.appLabel, credentialType: outcome.credentialTypeLabel, profile: outcome.profileLabel,
                issued: outcome.row.outcome == .success, reason: outcome.row.reason ?? "none")
        ].increment()
        switch outcome.result {
        case .success(.token(let issued)):
            return outcome.limits.answering(Self.tokenResponse(issued, profile: outcome.profileLabel))
        case .success(.secondFactorRequired(let challenge)):
            return outcome.limits.answering(Self.challengeResponse(challenge, requestID: context.requestID))
        case .failure(let answer):
            throw answer
        }
    }

    struct TokenLabels: Hashable {
        let app: String
        let credentialType: String
        let profile: String
        let issued: Bool
        let reason: String
    }

    /// `gateway_tokens_total`, by app, credential type, profile, outcome and reason.
    private static let tokens = MetricHandles<TokenLabels, Counter> { labels in
        Counter(
            label: "gateway_tokens_total",
            dimensions: [
                ("app_id", labels.app), ("credential_type", labels.credentialType), ("token_profile", labels.profile),
                ("outcome", labels.issued ? "issued" : "denied"), ("reason", labels.reason),
            ])
    }

    /// `{"identity_token": ...}` as Layer's SDK reads it; a token of another
    /// profile also names its profile (`token_profile`); where a session
    /// began or went on, its `refresh_token`, `session_id` and
    /// `refresh_token_expires_in` follow; a refresh's tokens for its
    /// `additional_nonces`, `additional_identity_tokens`.
    private static func tokenResponse(_ issued: TokenIssuer.Issued, profile: String) -> Response {
        var body = ByteBufferAllocator().buffer(capacity: issued.token.utf8.count + 256)
        body.writeString(#"{"identity_token":""#)
        body.writeString(issued.token)
        body.writeString(#"""#)
        if profile != TokenProfileEntry.layer.type {
            body.writeString(#","token_profile":""#)
            body.writeString(profile)
            body.writeString(#"""#)
        }
        if !issued.additionalTokens.isEmpty {
            body.writeString(#","additional_identity_tokens":["#)
            for (index, token) in issued.additionalTokens.enumerated() {
                body.writeString(index == 0 ? #"""# : #"",""#)
                body.writeString(token)
            }
            body.writeString(#""]"#)
        }
        if let session = issued.session {
            body.writeString(#","refresh_token":""#)
            body.writeString(session.refreshToken.text)
            body.writeString(#"","session_id":""#)
            body.writeString(session.sessionID.lowercasedText)
            body.writeString(#"","refresh_token_expires_in":"#)
            body.writeString(String(session.expiresInSeconds))
        }
        body.writeString("}")
        return Response(status: .ok, headers: tokenHeaders, body: .init(byteBuffer: body))
    }

    /// 403 `mfa_required` (or `mfa_enrollment_required`): an error as every
    /// other, with the ticket of the second step, how long it lives, and
    /// the credential types that complete it.
    static func challengeResponse(_ challenge: SecondFactorChallenge, requestID: String) -> Response {
        let error =
            challenge.needsEnrolment
            ? GatewayError(
                .mfaEnrollmentRequired, .forbidden,
                "This app requires a second factor and this user has none: enrol one with the mfa_ticket "
                    + "(POST /v1/mfa/totp), then complete the sign-in with its first code.")
            : GatewayError(
                .mfaRequired, .forbidden,
                "The credential is right; complete the sign-in with the mfa_ticket and a code of the user's second factor.")
        let body = ErrorResponder.body(of: error, requestID: requestID) { body in
            body.add("mfa_ticket", challenge.ticket.text)
            body.add("mfa_ticket_expires_in", Int64(challenge.expiresInSeconds))
            body.add(
                "mfa_methods",
                challenge.needsEnrolment ? [SecondFactors.totpType] : [SecondFactors.totpType, SecondFactors.recoveryCodeType])
        }
        return Response(status: .forbidden, headers: tokenHeaders, body: .init(byteBuffer: body))
    }

    private static let tokenHeaders: HTTPFields = [.contentType: "application/json; charset=utf-8", .cacheControl: "no-store"]
}
