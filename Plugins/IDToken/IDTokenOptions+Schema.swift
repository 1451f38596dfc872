import GatewayCore
import GatewayPluginKit

extension IDTokenOptions {
    /// `plugins.id_token`, declared: what a type can say. What needs two
    /// options at once (a preset or an issuer, jwks_url or discovery_url,
    /// https in production, one provider an issuer) ``IDTokenOptions`` checks.
    static let schema = OptionSchema(
        name: "IDTokenOptions", description: "Sign in with a provider's ID token (docs/plugins.md, \"ID tokens\").",
        retired: [
            "link_verified_email":
                "is each provider's own setting now: set it on the providers whose emails may link."
        ],
        fields: [
            OptionField(
                "providers", .list(of: .object(IDTokenProvider.fields), count: 1...maximumProviders), required: true)
        ])
}

extension IDTokenProvider {
    static let fields = [
        OptionField(
            "name", .text(TextRule(pattern: ("^[a-z0-9_-]{1,32}$", meaning: "1 to 32 characters of a-z, 0-9, _ and -"))),
            required: true, description: "Prefixes the user id (<name>:<sub>) unless user_id is subject. Unique in the app."),
        OptionField(
            "preset", .choice(presets.keys.sorted()),
            description: "Fills in the issuer, the keys' URL and the nonce rule; issuer must then be left out."),
        OptionField(
            "issuer", .text(maximumLength: 2048),
            description:
                "Required without a preset: the tokens' iss, exactly (https in production apps). Unique among the app's providers."),
        OptionField("audiences", .list(of: .text(TextRule(length: 1...256)), count: 1...maximumAudiences), required: true),
        OptionField("jwks_url", .text(maximumLength: 2048), description: "The JWK set; not with discovery_url."),
        OptionField(
            "discovery_url", .text(maximumLength: 2048),
            description:
                "An OpenID discovery document naming jwks_uri, taken only when its issuer is the provider's; <issuer>/.well-known/openid-configuration by default without a preset or jwks_url."
        ),
        OptionField(
            "nonce", .choice(["raw", "sha256", "none"]),
            description: "How the token's nonce claim is bound to the token request's nonce; the preset's, else raw."),
        OptionField("user_id", .choice(["prefixed", "subject"], default: "prefixed")),
        OptionField(
            "profile", .boolean(default: false),
            description: "Take name and picture as display_name and avatar_url, and a verified email (email_verified true) as email."),
        OptionField(
            "link_verified_email", .choice(["password"], nullable: true),
            description:
                "Off by default, and this provider's alone. password: a verified email of this provider's that is one of the app's password users' ids signs in as that user."
        ),
        OptionField(
            "apple_api", .object(AppleAPI.fields),
            description:
                "Sign in with Apple's REST API: an authorization_code sent with the ID token is exchanged for Apple's refresh token (kept sealed), revoked at Apple when the user deletes their account."
        ),
    ]
}

extension AppleAPI {
    static let fields = [
        OptionField("team_id", .text(TextRule(pattern: ("^[A-Z0-9]{10}$", meaning: "10 capital letters and digits"))), required: true),
        OptionField(
            "key_id", .text(TextRule(pattern: ("^[A-Z0-9]{10}$", meaning: "10 capital letters and digits"))), required: true,
            description: "The Sign in with Apple key's id."),
        OptionField(
            "private_key", .secret(1...4096), required: true,
            description: "The key's PEM (the .p8 file). Write-only: answered as ********."),
        OptionField(
            "client_id", .text(TextRule(length: 1...256)),
            description: "The bundle id or Services ID the code was issued to; the provider's first audience by default."),
        OptionField(
            "token_url", .text(maximumLength: 2048), destination: true,
            description: "https://appleid.apple.com/auth/token by default."),
        OptionField(
            "revoke_url", .text(maximumLength: 2048), destination: true,
            description: "https://appleid.apple.com/auth/revoke by default."),
    ]
}
