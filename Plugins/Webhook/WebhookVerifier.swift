import CoreMetrics
import GatewayCore
import GatewayPluginKit
import GatewayOutbound
import Logging

/// Checks `credentials: {"type": "webhook", ...}` by asking the tenant's
/// user service, in this order:
/// 1. `user_id` and every forwarded field must be present (else 400);
/// 2. with `migrate_on_success`, a user the app's password directory has
///    is checked there, and that verdict is final: the webhook is not called;
/// 3. while the app's circuit breaker is open, no call goes out: 502;
/// 4. the webhook's answer decides: valid (a token; with
///    `migrate_on_success`, the user is added to the password directory in
///    the background), invalid (401), anything else (502).
///
/// The gateway's limits apply before this runs (the verifier is not cheap to
/// ask), so a failure's reservation is taken before the call.
struct WebhookVerifier: CredentialVerifier {
    let options: WebhookOptions
    let call: WebhookCall
    let breaker: CircuitBreaker<AppID>
    /// The app's password directory, when its users move there.
    let passwords: (any PasswordDirectory)?
    let migrations: UserMigrations
    let logger: Logger

    func verify(_ attempt: CredentialAttempt) async throws -> VerificationResult {
        guard let userID = attempt.userID else {
            throw GatewayError.invalidRequest("user_id is required for credentials of type webhook.")
        }
        var fields: [String: String] = [:]
        for name in options.forwardFields { fields[name] = try attempt.credentials.requiredField(name) }
        let appID = attempt.app.appID

        if let passwords, let verdict = try await passwords.verify(userID, password: fields["password"] ?? "", in: appID) {
            return verdict
        }
        guard breaker.permits(appID) else {
            Self.count(appID, WebhookFailure.Reason.circuitOpen.rawValue)
            return .undecided(reason: WebhookFailure.Reason.circuitOpen.rawValue)
        }
        let answer: WebhookCall.Answer
        do {
            answer = try await call.ask(
                WebhookCall.Question(appID: appID, userID: userID, fields: fields, requestID: attempt.requestID),
                options: options)
        } catch {
            if error.isServiceFault { breaker.recordFailure(appID, options.breaker) }
            logger.warning(
                "webhook gave no verdict",
                metadata: ["app_id": "\(appID)", "reason": "\(error.reason.rawValue)", "detail": "\(error.detail)"])
            Self.count(appID, error.reason.rawValue)
            return .undecided(reason: error.reason.rawValue)
        }
        breaker.recordSuccess(appID)
        switch answer {
        case .invalid:
            Self.count(appID, "invalid")
            return .rejected(reason: "webhook_rejected")
        case .valid(let identity):
            Self.count(appID, "valid")
            if let passwords, let password = fields["password"], identity.userID == userID {
                migrate(identity, password: password, into: passwords, appID: appID, requestID: attempt.requestID)
            }
            return .verified(identity)
        }
    }

    /// Adds the user to the password directory in the background; a failure
    /// (the hashing queue is full, the database is away) leaves the user to
    /// the webhook until a later login succeeds in moving them.
    private func migrate(
        _ identity: VerifiedIdentity, password: String, into passwords: any PasswordDirectory, appID: AppID, requestID: String
    ) {
        let logger = self.logger
        migrations.start(identity.userID, in: appID) {
            let outcome: String
            do {
                outcome = try await passwords.adopt(identity, password: password, in: appID, requestID: requestID, from: "webhook")
                    ? "added" : "exists"
            } catch {
                outcome = "failed"
                logger.warning("moving a user to the password directory failed", metadata: ["app_id": "\(appID)", "error": "\(error)"])
            }
            Counter(label: "gateway_webhook_migrations_total", dimensions: [("outcome", outcome)]).increment()
        }
    }

    /// `gateway_webhook_calls_total`: each verdict asked of a webhook, by app and outcome
    /// (`valid`, `invalid`, or the failure's audit reason).
    static func count(_ appID: AppID, _ outcome: String) {
        Counter(label: "gateway_webhook_calls_total", dimensions: [("app_id", appID.description), ("outcome", outcome)])
            .increment()
    }
}
