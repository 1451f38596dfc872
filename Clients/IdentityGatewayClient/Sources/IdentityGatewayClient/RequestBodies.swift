/// The JSON bodies of the public routes, spelled as the gateway reads them
/// (openapi.yaml). Optional members that are `nil` are left out.
enum RequestBody {
    struct Token: Encodable, Sendable {
        let app_id: String
        let user_id: String?
        let nonce: String
        let credentials: [String: String]
        let token_profile: String?
        let device_label: String?
        /// A refresh's further challenges, answered by the same rotation.
        var additional_nonces: [String]? = nil
    }

    struct SessionOnly: Encodable, Sendable {
        let app_id: String
        let refresh_token: String
    }

    struct Ticket: Encodable, Sendable {
        let app_id: String
        let mfa_ticket: String
    }

    struct SessionCode: Encodable, Sendable {
        let app_id: String
        let refresh_token: String
        let code: String
    }

    struct AppOnly: Encodable, Sendable {
        let app_id: String
    }

    struct Phone: Encodable, Sendable {
        let app_id: String
        let phone_number: String
    }

    struct Email: Encodable, Sendable {
        let app_id: String
        let email: String
        let locale: String?
    }

    struct SignUp: Encodable, Sendable {
        let app_id: String
        let email: String
        let password: String
        let first_name: String?
        let last_name: String?
        let display_name: String?
    }

    struct EmailCode: Encodable, Sendable {
        let app_id: String
        let email: String
        let code: String
    }

    struct PasswordReset: Encodable, Sendable {
        struct SecondFactor: Encodable, Sendable {
            let type: String
            let code: String
        }
        let app_id: String
        let email: String
        let code: String
        let new_password: String
        let second_factor: SecondFactor?
    }

    struct PasswordChange: Encodable, Sendable {
        let app_id: String
        let refresh_token: String
        let current_password: String
        let new_password: String
    }

    struct Deletion: Encodable, Sendable {
        let app_id: String
        let refresh_token: String
        let password: String?
    }
}

/// The answers of those routes that carry more than a status.
enum AnswerBody {
    struct CodeSent: Decodable {
        let expires_in: Int
        let resend_after: Int
    }

    struct Verified: Decodable {
        let user_id: String?
    }

    struct PasswordChanged: Decodable {
        let sessions_ended: Int?
    }

    struct TOTP: Decodable {
        let secret: String
        let otpauth_uri: String
        let recovery_codes: [String]
    }

    struct PasskeyOptions: Decodable {
        let challenge: String
        let rpId: String
        let timeout: Int
        let userVerification: String
    }
}
