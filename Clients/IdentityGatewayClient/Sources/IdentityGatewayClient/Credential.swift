/// What a user signs in with: one value per credential plugin the gateway
/// has. The app must list its type among its `credential_types`.
public struct Credential: Sendable {
    let type: String
    let fields: [String: String]

    /// A password the gateway keeps (argon2id). Sign in with the user id.
    public static func password(_ password: String) -> Credential {
        Credential(type: "password", fields: ["password": password])
    }

    /// A static test user of a development app.
    public static func staticUser(password: String) -> Credential {
        Credential(type: "static", fields: ["password": password])
    }

    /// A code sent by SMS (``GatewayClient/requestPhoneCode(to:)``).
    public static func phoneCode(phoneNumber: String, code: String) -> Credential {
        Credential(type: "phone_code", fields: ["phone_number": phoneNumber, "code": code])
    }

    /// A code sent by email (``GatewayClient/requestEmailCode(to:locale:)``).
    public static func emailCode(email: String, code: String) -> Credential {
        Credential(type: "email_code", fields: ["email": email, "code": code])
    }

    /// An ID token from Sign in with Apple, Google or another OpenID
    /// provider the app trusts. With Apple, pass the authorization code too:
    /// the gateway exchanges it so that deleting the account revokes it at Apple.
    public static func idToken(_ idToken: String, authorizationCode: String? = nil) -> Credential {
        var fields = ["id_token": idToken]
        fields["authorization_code"] = authorizationCode
        return Credential(type: "id_token", fields: fields)
    }

    /// A passkey's assertion, over a challenge from
    /// ``GatewayClient/passkeyRequestOptions()``.
    public static func passkey(_ assertion: PasskeyAssertion) -> Credential {
        var fields = [
            "credential_id": Base64URL.encode(assertion.credentialID),
            "client_data_json": Base64URL.encode(assertion.clientDataJSON),
            "authenticator_data": Base64URL.encode(assertion.authenticatorData),
            "signature": Base64URL.encode(assertion.signature),
        ]
        fields["user_handle"] = assertion.userHandle.map(Base64URL.encode)
        return Credential(type: "passkey", fields: fields)
    }

    /// A credential of the app's own (its webhook checks it): the type the
    /// app lists and the fields its webhook reads.
    public static func custom(type: String, fields: [String: String]) -> Credential {
        Credential(type: type, fields: fields)
    }
}
