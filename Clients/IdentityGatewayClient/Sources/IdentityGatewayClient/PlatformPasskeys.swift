#if canImport(AuthenticationServices) && (os(iOS) || os(macOS) || os(visionOS))
public import AuthenticationServices

/// Asks the platform's authenticator (iCloud Keychain, a security key) for
/// a passkey assertion over the gateway's challenge: the thin Apple-only
/// half of a passkey sign-in. The HTTP half (the options, the credential)
/// is ``GatewayClient/passkeyRequestOptions()`` and
/// ``Credential/passkey(_:)``, which build and run everywhere.
///
/// ```swift
/// let options = try await client.passkeyRequestOptions()
/// let assertion = try await PlatformPasskeys(anchor: view.window!).assertion(for: options)
/// let result = try await client.signIn(userID: nil, credential: .passkey(assertion), nonce: nonce)
/// ```
@MainActor
public final class PlatformPasskeys: NSObject {
    private let anchor: ASPresentationAnchor
    private var pending: CheckedContinuation<PasskeyAssertion, any Error>?

    /// The window the system's sheet is shown over.
    public init(anchor: ASPresentationAnchor) {
        self.anchor = anchor
    }

    /// The user's assertion for `options`; throws `ASAuthorizationError`
    /// when they cancel or have no passkey for the app.
    public func assertion(for options: PasskeyRequestOptions) async throws -> PasskeyAssertion {
        let provider = ASAuthorizationPlatformPublicKeyCredentialProvider(relyingPartyIdentifier: options.relyingPartyID)
        let request = provider.createCredentialAssertionRequest(challenge: options.challenge)
        request.userVerificationPreference = options.userVerification == "required" ? .required : .preferred
        let controller = ASAuthorizationController(authorizationRequests: [request])
        controller.delegate = self
        controller.presentationContextProvider = self
        return try await withCheckedThrowingContinuation { continuation in
            pending = continuation
            controller.performRequests()
        }
    }

    private func finish(_ result: Result<PasskeyAssertion, any Error>) {
        pending?.resume(with: result)
        pending = nil
    }
}

extension PlatformPasskeys: @preconcurrency ASAuthorizationControllerDelegate {
    public func authorizationController(
        controller: ASAuthorizationController, didCompleteWithAuthorization authorization: ASAuthorization
    ) {
        guard let credential = authorization.credential as? ASAuthorizationPlatformPublicKeyCredentialAssertion else {
            finish(.failure(ASAuthorizationError(.failed)))
            return
        }
        finish(
            .success(
                PasskeyAssertion(
                    credentialID: credential.credentialID, clientDataJSON: credential.rawClientDataJSON,
                    authenticatorData: credential.rawAuthenticatorData, signature: credential.signature,
                    userHandle: credential.userID)))
    }

    public func authorizationController(controller: ASAuthorizationController, didCompleteWithError error: any Error) {
        finish(.failure(error))
    }
}

extension PlatformPasskeys: @preconcurrency ASAuthorizationControllerPresentationContextProviding {
    public func presentationAnchor(for controller: ASAuthorizationController) -> ASPresentationAnchor {
        anchor
    }
}
#endif
