import GatewayCore
import GatewayCourier
import GatewayPluginKit

extension EmailCodeOptions {
    /// `plugins.email_code`, declared: what a type can say. The address's
    /// form, a host that is public, an SMTP port, a template's language tag
    /// and its `{code}`, and what only development apps may use,
    /// ``EmailCodeOptions`` checks.
    static let schema = OptionSchema(
        name: "EmailCodeOptions", description: "One-time codes by email, delivered through the outbox (docs/plugins.md, \"Email codes\").",
        fields: [
            OptionField("from", .text(maximumLength: 254), required: true, description: "The sender's address (From and MAIL FROM)."),
            OptionField("from_name", .text(maximumLength: 128), description: "A display name; no control characters."),
            OptionField("code_length", .integer(codeLengths, default: 6)),
            OptionField("code_ttl_seconds", .integer(lifetimes, default: 600)),
            OptionField("max_attempts", .integer(attempts, default: 5)),
            OptionField("resend_after_seconds", .integer(resendDelays, default: 60)),
            OptionField(
                "allow_unknown_addresses", .boolean(default: false),
                description: "An address that belongs to no user signs in as itself (its lower-cased form)."),
            OptionField(
                "default_locale", .text(default: "en"),
                description: "A locale the app has a template for (built in: en, de, fr, es)."),
            OptionField(
                "send_protection", .component(SendProtection.schema),
                description: "The human check only: a mail has no country and costs nothing per prefix."),
            OptionField(
                "templates",
                .map(
                    of: .object([
                        OptionField("subject", .text(TextRule(length: 1...200)), required: true, description: "No control characters."),
                        OptionField("text", .text(maximumLength: 10_000), required: true),
                        OptionField("html", .text(maximumLength: 50_000)),
                    ]), count: 0...EmailTemplates.maximumLocales, key: "language"),
                description: "By lower-case language tag. {code}, {app_name} and {minutes} are replaced; text and html must show {code}."),
            OptionField("sender", .variants(senders), required: true),
        ])

    static let senders = [
        OptionVariant(
            "smtp",
            [
                OptionField(
                    "host", .text(maximumLength: 253), required: true, destination: true,
                    description:
                        "A public host (unless the operator sets email.allow_private_addresses); checked again at each delivery."),
                OptionField(
                    "port", .integer(1...65535), destination: true,
                    description:
                        "25, 465, 587 or 2525 unless the operator allows private addresses; 587, or 465 with tls implicit, by default."),
                OptionField(
                    "tls", .choice(["starttls", "implicit", "none"], default: "starttls"), destination: true,
                    description: "starttls is required, never downgraded; none only for development apps."),
                OptionField("username", .text(TextRule(length: 1...256))),
                OptionField("password", .secret(1...256), description: "Write-only; needs a username."),
                OptionField("timeout_seconds", .integer(timeouts, default: 30), description: "Bounds one message's whole exchange."),
            ]),
        OptionVariant(
            "ses", description: "Amazon SES v2 SendEmail, the message as raw MIME, signed with SigV4; from must be an identity SES verified.",
            [
                OptionField(
                    "region", .text(TextRule(length: 6...32, pattern: ("^[a-z]+(-[a-z]+)+-[0-9]$", meaning: "an AWS region such as eu-west-1"))),
                    required: true, destination: true, description: "Like eu-west-1."),
                OptionField(
                    "access_key_id", .text(TextRule(length: 16...128, pattern: ("^[A-Z0-9]+$", meaning: "capital letters and digits"))),
                    required: true),
                OptionField("secret_access_key", .secret(16...128), required: true, description: "Write-only."),
                OptionField(
                    "configuration_set",
                    .text(TextRule(length: 1...64, pattern: ("^[A-Za-z0-9_-]+$", meaning: "letters, digits, _ and -")))),
                OptionField(
                    "endpoint", .url, destination: true,
                    description:
                        "https://email.<region>.amazonaws.com unless given; a public host unless the operator sets email.allow_private_addresses."
                ),
                OptionField("timeout_seconds", .integer(timeouts, default: 30), description: "Bounds one call."),
            ]),
        OptionVariant(
            "http",
            description:
                "The app's own endpoint: {message_id, app_id, from, to, text, mime (base64 RFC 5322)} posted as JSON, signed as SMS webhooks are.",
            [
                OptionField(
                    "url", .url, required: true, destination: true,
                    description: "A public host unless the operator sets email.allow_private_addresses."),
                OptionField("secret", .secret(16...256), required: true, description: "Write-only."),
                OptionField("timeout_seconds", .integer(timeouts, default: 30), description: "Bounds one call."),
            ]),
        OptionVariant("log", description: "Development apps only.", []),
    ]
}
