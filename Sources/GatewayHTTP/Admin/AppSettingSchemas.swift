public import GatewayCore
public import GatewayPluginKit

/// The app settings that are one object each (`sessions`, `mfa`,
/// `self_service`), declared once as plugins declare their options: the
/// admin API checks a change against the declaration before reading it,
/// `openapi.yaml` publishes it (a test holds the two equal), and the
/// console renders it as a form. `null` turns each off.
public enum AppSettingSchemas {
    /// Each setting by its member in the app's settings.
    public static let all: [(member: String, title: String, schema: OptionSchema)] = [
        ("sessions", "Sessions", sessions), ("mfa", "Second factor", secondFactor), ("self_service", "Self-service", selfService),
    ]

    /// `rate_limits`: the app's numbers per policy, by the policy's name
    /// (which the admin API checks against the deployment's policies).
    public static let rateLimits = OptionShape.map(
        of: .object([
            OptionField("limit", .integer(RateLimitPolicy.limitRange), required: true),
            OptionField("period_seconds", .integer(RateLimitPolicy.periodRange), required: true),
        ]), count: 0...Int.max, key: "policy")

    /// What `openapi.yaml` publishes as `components.schemas.RateLimitOverrides`.
    public static var rateLimitsJSONSchema: JSONValue {
        guard case .object(var schema) = rateLimits.jsonSchemaValue else { return .null }
        schema["description"] = .string(
            "This app's numbers per policy (ip, app, user_failures, refresh_failures, mfa_failures, phone_failures, code_sends_number, code_sends_ip, passkey_challenges). An override an operator set (listed in the app's rate_limits_set_by_operator) is the operator's to change or remove; the app's own admin may only add tighter ones of its own. A change of a policy's period counts, for one period, as if its whole limit had been spent at the change."
        )
        return .object(schema)
    }

    public static let sessions = OptionSchema(
        name: "SessionSettings",
        description:
            "Sessions and their refresh tokens (docs/tokens.md, \"Sessions\"): an object turns them on, each setting its default unless given; null (the default) turns them off.",
        nullTurnsOff: true,
        fields: [
            OptionField(
                "idle_timeout_seconds", .integer(SessionSettings.idleTimeoutRange, default: SessionSettings().idleTimeoutSeconds),
                description: "A session unused this long ends."),
            OptionField(
                "absolute_lifetime_seconds",
                .integer(SessionSettings.absoluteLifetimeRange, default: SessionSettings().absoluteLifetimeSeconds),
                description: "A session ends this long after its sign-in; at least idle_timeout_seconds."),
            OptionField(
                "reuse_grace_seconds", .integer(SessionSettings.reuseGraceRange, default: SessionSettings().reuseGraceSeconds),
                description:
                    "How long a spent refresh token is answered with the same successor (a lost answer, a retry) before it counts as reuse, which ends the session."
            ),
            OptionField(
                "max_sessions_per_user", .integer(SessionSettings.maximumPerUserRange, default: SessionSettings().maximumPerUser),
                description: "Live sessions one user may hold; a new one past it ends the oldest."),
            OptionField(
                "revoke_on_password_change", .boolean(default: SessionSettings().revokeOnPasswordChange),
                description: "A new password through the admin API ends the user's sessions (disabling or deleting them always does)."),
        ])

    public static let secondFactor = OptionSchema(
        name: "SecondFactorSettings",
        description:
            "The second factor (docs/tokens.md, \"Second factor\"): an object turns it on; null (the default) turns it off.",
        nullTurnsOff: true,
        fields: [
            OptionField(
                "requirement",
                .choice(SecondFactorSettings.Requirement.allCases.map(\.rawValue), default: SecondFactorSettings().requirement.rawValue),
                description:
                    "optional: users who enrolled a factor must pass it. required: every user must; one without is answered 403 mfa_enrollment_required."
            ),
            OptionField(
                "exempt_credential_types", .list(of: .text(), count: 0...32),
                description:
                    "First factors asked for nothing more (those that already are two). Where a plugin says of each sign-in how it was made (a passkey), only a sign-in that was two factors itself (mfa in its amr) is exempt."
            ),
            OptionField(
                "ticket_lifetime_seconds",
                .integer(SecondFactorSettings.ticketLifetimeRange, default: SecondFactorSettings().ticketLifetimeSeconds)),
            OptionField(
                "issuer", .text(TextRule(length: 1...SecondFactorSettings.maximumIssuerBytes)),
                description: "The issuer authenticator apps show; the app's name when unset."),
        ])

    public static let selfService = OptionSchema(
        name: "SelfServiceSettings",
        description:
            "What the app's users may do for themselves (docs/tokens.md, \"Self-service accounts\"): an object (every flow off unless named); null (the default) turns self-service off. Needs password and email_code among credential_types. An app's own admin may not open sign_up further (closed < verified_email < open), lengthen code_ttl_seconds or recent_sign_in_seconds, or raise max_attempts: those are an operator's.",
        nullTurnsOff: true,
        fields: [
            OptionField(
                "sign_up", .choice(SelfServiceSettings.SignUp.allCases.map(\.rawValue), default: SelfServiceSettings().signUp.rawValue),
                description: "verified_email: an account signs in only once its address is verified."),
            OptionField(
                "user_ids", .choice(SelfServiceSettings.UserIDs.allCases.map(\.rawValue), default: SelfServiceSettings().userIDs.rawValue),
                description: "A new account's user id: a random UUID, or the address."),
            OptionField("password_reset", .boolean(default: false), description: "Users recover a forgotten password by email."),
            OptionField("email_change", .boolean(default: false), description: "Users change their address."),
            OptionField("account_deletion", .boolean(default: false), description: "Users delete their account."),
            OptionField(
                "code_ttl_seconds", .integer(SelfServiceSettings.codeLifetimes, default: SelfServiceSettings().codeLifetimeSeconds)),
            OptionField("max_attempts", .integer(SelfServiceSettings.attempts, default: SelfServiceSettings().maximumAttempts)),
            OptionField(
                "recent_sign_in_seconds",
                .integer(SelfServiceSettings.recentSignIns, default: SelfServiceSettings().recentSignInSeconds),
                description:
                    "How recent a session's sign-in must be to change the address or delete the account without the password."),
        ])
}
