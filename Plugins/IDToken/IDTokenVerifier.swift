import CoreMetrics
import Foundation
import GatewayCore
import GatewayPluginKit
import Logging

/// Checks `credentials: {"type": "id_token", "id_token": "<the provider's ID token>"}`
/// (with `"authorization_code"` too for a provider with `apple_api`), in this order:
/// 1. the token's shape and `alg` (RS256 or ES256 only); its `iss` picks
///    the app's provider (none: `id_token_issuer`);
/// 2. the provider's keys (``ProviderKeys``): none to be had is a 502
///    (`id_token_provider_unavailable`), never a 401; a `kid` the keys lack
///    fetches them again, within the refetch limit;
/// 3. the signature and `sub` (``UnverifiedIDToken/signed(by:)``), then `iss`, `aud`,
///    `exp`/`iat`/`nbf` within a minute's skew and the `nonce` by the
///    provider's rule against the request's nonce (``SignedIDToken/verify(provider:requestNonce:now:)``);
/// 4. a `user_id` sent with the request must be the user the token verifies;
/// 5. the token is recorded for the app, once (``IDTokenUses``): a second
///    use, on any replica, is `id_token_replayed`;
/// 6. an `authorization_code`, where the provider has `apple_api`, is
///    exchanged for Apple's refresh token, kept sealed for the user
///    (``AppleGrantKeeper``); a failed exchange is logged and counted, and
///    the sign-in goes on.
///
/// Each failed check is a 401 whose audit reason names it
/// (``IDTokenRefusal/auditReason``). The gateway's limits apply before this
/// runs (the verifier is not cheap to ask): per client and app; a `user_id`
/// the request names counts for nothing (the token proves its user,
/// ``provesItsUser``). Once the signature holds, a failure counts against
/// the user `sub` makes (``VerificationResult/rejected(reason:userID:)``),
/// and a verified token is refused while that user is over the failure limit.
struct IDTokenVerifier: CredentialVerifier {
    var provesItsUser: Bool { true }

    let options: IDTokenOptions
    let keys: ProviderKeys
    /// The app's password directory, where verified emails are linked to its users.
    let passwords: (any PasswordDirectory)?
    let uses: any IDTokenUseStore
    /// Where an Apple authorization code is exchanged and its grant kept.
    let appleGrants: AppleGrantKeeper
    let logger: Logger
    let now: @Sendable () -> Date

    func verify(_ attempt: CredentialAttempt) async throws -> VerificationResult {
        let compact = try attempt.credentials.requiredField("id_token")
        let appID = attempt.app.appID
        let outcome = try await check(compact, attempt: attempt, appID: appID)
        switch outcome {
        case .verified:
            Self.count(appID, "verified")
        case .rejected(let reason, _), .undecided(let reason):
            Self.count(appID, reason)
        }
        return outcome
    }

    private func check(_ compact: String, attempt: CredentialAttempt, appID: AppID) async throws -> VerificationResult {
        let token: UnverifiedIDToken
        do { token = try UnverifiedIDToken(compact) } catch { return .rejected(reason: error.auditReason) }
        guard let provider = options.provider(issuer: token.issuer) else {
            return .rejected(reason: IDTokenRefusal.issuer.auditReason)
        }
        let subject = appID.uuid.lowercasedText
        var key: ProviderKey?
        do {
            key = token.key(in: try await keys.keys(provider.keys, for: subject, logger: logger))
            if key == nil { key = token.key(in: try await keys.refreshed(provider.keys, for: subject, logger: logger)) }
        } catch {
            return .undecided(reason: "id_token_provider_unavailable")
        }
        guard let key else { return .rejected(reason: IDTokenRefusal.unknownKey.auditReason) }

        let signed: SignedIDToken
        do {
            signed = try token.signed(by: key)
        } catch .signature where token.keyID == nil {
            // A token naming no key was checked against the provider's only
            // one; it may have rotated since: fetch again (within the limit).
            do {
                let fresh = try await keys.refreshed(provider.keys, for: subject, logger: logger)
                guard let rotated = token.key(in: fresh) else { return .rejected(reason: IDTokenRefusal.signature.auditReason) }
                signed = try token.signed(by: rotated)
            } catch let refusal as IDTokenRefusal {
                return .rejected(reason: refusal.auditReason)
            } catch {
                return .rejected(reason: IDTokenRefusal.signature.auditReason)
            }
        } catch {
            return .rejected(reason: error.auditReason)
        }
        // From here on the provider vouches for `sub`: a failed check counts against that user.
        let signedUser = provider.userID(for: signed.subject)
        let verified: VerifiedIDToken
        do {
            verified = try signed.verify(provider: provider, requestNonce: attempt.nonce, now: now())
        } catch {
            return .rejected(reason: error.auditReason, userID: signedUser)
        }
        var linked: VerifiedIdentity?
        if let passwords, provider.linksVerifiedEmailToPasswords, verified.emailVerified, let email = verified.email {
            switch try await passwords.identity(of: email, in: appID) {
            case .verified(let user)?: linked = user
            case .rejected(let reason, _)?: return .rejected(reason: reason, userID: signedUser)
            case .undecided, nil: break
            }
        }
        let userID = linked?.userID ?? signedUser
        if let named = attempt.userID, named != userID { return .rejected(reason: IDTokenRefusal.userID.auditReason) }
        guard try await uses.firstUse(of: verified, in: appID) else {
            return .rejected(reason: IDTokenRefusal.replayed.auditReason, userID: userID)
        }
        if let code = attempt.credentials.fields["authorization_code"], let apple = provider.apple {
            await appleGrants.exchange(code, with: apple, provider: provider.name, for: userID, in: appID, logger: logger)
        }
        if let linked { return .verified(linked) }
        var identity = VerifiedIdentity(userID: userID)
        if provider.usesProfileClaims {
            identity.profile[.displayName] = verified.name
            identity.profile[.avatarURL] = verified.picture
            // Only an address the provider vouches for, and only one a directory could store.
            if verified.emailVerified { identity.profile[.email] = (try? ProfileField.email.checked(verified.email)) ?? nil }
        }
        return .verified(identity)
    }

    /// `gateway_id_token_checks_total`: each token checked, by app and outcome (`verified` or the audit reason).
    static func count(_ appID: AppID, _ outcome: String) {
        Counter(label: "gateway_id_token_checks_total", dimensions: [("app_id", appID.description), ("outcome", outcome)])
            .increment()
    }
}
