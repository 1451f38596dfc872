import Foundation
import GatewayCore
import GatewayPluginKit
import GatewayOutbound

/// An app's options for the webhook plugin (`plugins.webhook`), read
/// strictly: an unknown key or a value out of bounds is a 400 naming it.
/// The secret is write-only: the admin API shows it as ``RedactedSecret/marker``.
///
/// ```json
/// {"url": "https://users.example.com/verify", "secret": "...", "timeout_ms": 2000,
///  "forward_fields": ["password"], "migrate_on_success": "password",
///  "circuit_breaker": {"failures": 5, "cool_down_seconds": 30}}
/// ```
struct WebhookOptions: Sendable {
    static let timeouts = 100...10_000
    static let forwardedFieldCount = 1...8
    static let secretBytes = 16...256

    /// The options as declared once (``OptionSchema``); ``init(_:environment:passwordsInstalled:)`` adds what a type cannot say.
    static let schema = OptionSchema(
        name: "WebhookOptions",
        description: "The tenant's user service vouches for each sign-in (docs/plugins.md, \"Webhooks\").",
        fields: [
            OptionField(
                "url", .text(maximumLength: 2048), required: true, destination: true,
                description:
                    "The tenant's user service: https in production apps; public addresses only unless the operator sets webhook.allow_private_addresses."
            ),
            OptionField(
                "secret", .secret(secretBytes), required: true,
                description: "Signs each call (docs/plugins.md, \"Verifying the gateway's signature\"). Write-only, sealed at rest."),
            OptionField("timeout_ms", .integer(timeouts, default: 2000)),
            OptionField(
                "forward_fields",
                .list(
                    of: .text(TextRule(pattern: ("^[a-z0-9_]{1,64}$", meaning: "a credential field name (a-z, 0-9, _)"))),
                    count: forwardedFieldCount, unique: true, defaultValue: ["password"]),
                description: "The credential fields sent to the service (not type); each is required in a token request."),
            OptionField(
                "migrate_on_success", .choice(["password"], nullable: true),
                description: "Move users the service vouches for into the password plugin's directory."),
            CircuitBreaker<AppID>.Settings.option,
        ])

    let url: URL
    let secret: String
    let timeout: Duration
    /// The credential fields sent to the tenant; each is required in a token request.
    let forwardFields: [String]
    /// Whether a user the tenant vouches for is added to the app's password directory.
    let migratesToPasswords: Bool
    let breaker: CircuitBreaker<AppID>.Settings

    /// - Parameter passwordsInstalled: whether this gateway has the password plugin (for `migrate_on_success`).
    init(_ options: JSONValue, environment: AppEnvironment, passwordsInstalled: Bool) throws(GatewayError) {
        let reader = try JSONInput(options, path: "plugins.webhook")
        try reader.rejectUnknown(allowed: [
            "url", "secret", "timeout_ms", "forward_fields", "migrate_on_success", "circuit_breaker",
        ])
        guard let url = try reader.httpURL("url") else {
            throw .invalidRequest("plugins.webhook.url is required: the https URL of the tenant's user service.")
        }
        guard environment == .development || url.scheme?.lowercased() == "https" else {
            throw .invalidRequest("plugins.webhook.url must be https in a production app.")
        }
        guard url.user == nil, url.password == nil else {
            throw .invalidRequest("plugins.webhook.url must not carry a user name or password; the secret signs each call.")
        }
        if let refusal = OutboundAddressPolicy.refusal(of: url, field: "plugins.webhook.url") { throw refusal }
        self.url = url

        secret = try reader.secret("secret", bytes: Self.secretBytes)
        timeout = .milliseconds(try reader.integer("timeout_ms", in: Self.timeouts) ?? 2000)

        let fields = try reader.strings("forward_fields", maximumCount: Self.forwardedFieldCount.upperBound) ?? ["password"]
        guard !fields.isEmpty, Set(fields).count == fields.count else {
            throw .invalidRequest("plugins.webhook.forward_fields must name 1 to 8 different credential fields.")
        }
        for field in fields {
            guard (1...64).contains(field.utf8.count), field != "type",
                field.utf8.allSatisfy({ (UInt8(ascii: "a")...UInt8(ascii: "z")).contains($0) || $0 == UInt8(ascii: "_") || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) })
            else {
                throw .invalidRequest("plugins.webhook.forward_fields: '\(field)' is not a credential field name (a-z, 0-9, _; not type).")
            }
        }
        forwardFields = fields

        switch try reader.string("migrate_on_success") {
        case nil:
            migratesToPasswords = false
        case "password":
            guard passwordsInstalled else {
                throw .invalidRequest("plugins.webhook.migrate_on_success: the password plugin is not installed on this gateway.")
            }
            guard fields.contains("password") else {
                throw .invalidRequest("plugins.webhook.migrate_on_success needs \"password\" among forward_fields.")
            }
            migratesToPasswords = true
        case let other?:
            throw .invalidRequest("plugins.webhook.migrate_on_success: '\(other)' is not a plugin users can move to (only \"password\").")
        }

        breaker = try CircuitBreaker.Settings(circuitBreakerIn: reader)
    }
}
