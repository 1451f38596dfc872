import Foundation
import GatewayCore
import GatewayCourier
import GatewayOutbound
import GatewayPluginKit

/// An app's options for the email-code plugin (`plugins.email_code`), read
/// strictly. The sender's secrets (SMTP's `password`, SES's
/// `secret_access_key`, the `http` sender's `secret`) are write-only: the
/// admin API shows them as ``RedactedSecret/marker``.
struct EmailCodeOptions: Sendable {
    enum Sender: Sendable {
        case smtp(SMTPSettings)
        /// Amazon SES v2's `SendEmail`, signed with the app's access key.
        case ses(SESSettings)
        /// The app's own endpoint: the message `POST`ed as JSON, signed as
        /// the SMS webhook is (``EmailAPISender``).
        case http(url: URL, secret: String, timeout: Duration)
        /// The message in the server log: development apps only.
        case log

        var kind: String {
            switch self {
            case .smtp: "smtp"
            case .ses: "ses"
            case .http: "http"
            case .log: "log"
            }
        }
    }

    /// Where and as whom SES v2 is called.
    struct SESSettings: Sendable {
        let region: String
        let accessKeyID: String
        let secretAccessKey: String
        let configurationSet: String?
        /// `https://email.<region>.amazonaws.com` unless the options name another.
        let endpoint: URL
        let timeout: Duration
    }

    var codeLength = 6
    var lifetimeSeconds = 600
    var maximumAttempts = 5
    var resendAfterSeconds = 60
    /// An address that belongs to no user signs in as itself (`prn` = the address).
    var allowUnknownAddresses = false
    var from: EmailAddress
    var fromName: String?
    var templates: EmailTemplates
    var sender: Sender
    /// The human check before a code is mailed (no breaker: a mail costs nothing per country).
    var protection = SendProtection()

    static let codeLengths = 6...10
    static let lifetimes = 60...3600
    static let attempts = 1...10
    static let resendDelays = 10...3600
    static let timeouts = 5...120

    init(
        _ options: JSONValue, environment: AppEnvironment, allowsLogSender: Bool = true, allowsPrivateAddresses: Bool = false
    ) throws(GatewayError) {
        let reader = try JSONInput(options, path: "plugins.email_code")
        try reader.rejectUnknown(allowed: [
            "code_length", "code_ttl_seconds", "max_attempts", "resend_after_seconds", "allow_unknown_addresses", "from",
            "from_name", "default_locale", "templates", "sender", "send_protection",
        ])
        codeLength = try reader.integer("code_length", in: Self.codeLengths) ?? codeLength
        lifetimeSeconds = try reader.integer("code_ttl_seconds", in: Self.lifetimes) ?? lifetimeSeconds
        maximumAttempts = try reader.integer("max_attempts", in: Self.attempts) ?? maximumAttempts
        resendAfterSeconds = try reader.integer("resend_after_seconds", in: Self.resendDelays) ?? resendAfterSeconds
        allowUnknownAddresses = try reader.bool("allow_unknown_addresses") ?? false
        from = try EmailAddress.parse(try reader.string("from"), field: "plugins.email_code.from")
        fromName = try reader.string("from_name")
        if let fromName {
            guard HeaderText.isPlain(fromName), fromName.utf8.count <= 128 else {
                throw .invalidRequest("plugins.email_code.from_name must be at most 128 bytes with no control characters.")
            }
        }
        templates = try EmailTemplates(
            reader.object("templates"), defaultLocale: try reader.string("default_locale"), path: "plugins.email_code")
        protection = try SendProtection(try reader.object("send_protection"), path: "plugins.email_code", sms: false)
        sender = try Self.sender(
            try reader.object("sender"), environment: environment, allowsLog: allowsLogSender,
            allowsPrivateAddresses: allowsPrivateAddresses, greetingName: String(from.mailbox.split(separator: "@").last ?? "localhost"))
    }

    private static func sender(
        _ reader: JSONInput?, environment: AppEnvironment, allowsLog: Bool, allowsPrivateAddresses: Bool, greetingName: String
    ) throws(GatewayError) -> Sender {
        let path = "plugins.email_code.sender"
        guard let reader else {
            throw .invalidRequest("\(path) is required: {\"type\": \"smtp\" | \"ses\" | \"http\" | \"log\", ...}.")
        }
        switch try reader.string("type") {
        case "smtp":
            try reader.rejectUnknown(allowed: ["type", "host", "port", "tls", "username", "password", "timeout_seconds"])
            guard let host = try reader.string("host"), Self.isHostName(host) else {
                throw .invalidRequest("\(path).host is required: a host name or an IPv4 address.")
            }
            if OutboundAddressPolicy.isAmbiguousNumber(host) {
                throw .invalidRequest("\(path).host: \(host) must be a name or a canonical address (like 203.0.113.7).")
            }
            if let literal = IPAddress(host), !allowsPrivateAddresses, !OutboundAddressPolicy.isPublic(literal) {
                throw .invalidRequest("\(path).host: \(host) is not a public address (private addresses are off on this gateway).")
            }
            let security: SMTPSettings.Security
            switch try reader.string("tls") ?? "starttls" {
            case "starttls": security = .startTLS
            case "implicit": security = .implicitTLS
            case "none":
                guard environment == .development else {
                    throw .invalidRequest("\(path).tls: none is for development apps only; use starttls or implicit.")
                }
                security = .none
            default: throw .invalidRequest("\(path).tls must be starttls, implicit or none.")
            }
            let port = try reader.integer("port", in: 1...65535) ?? (security == .implicitTLS ? 465 : 587)
            guard allowsPrivateAddresses || SMTPSettings.submissionPorts.contains(port) else {
                throw .invalidRequest("\(path).port must be an SMTP port: 25, 465, 587 or 2525.")
            }
            var credentials: SMTPSettings.Credentials?
            if let username = try reader.string("username") {
                guard !username.isEmpty, username.utf8.count <= 256, HeaderText.isPlain(username) else {
                    throw .invalidRequest("\(path).username must be 1 to 256 bytes with no control characters.")
                }
                let password = try reader.secret("password", bytes: 1...256)
                guard HeaderText.isPlain(password) else {
                    throw .invalidRequest("\(path).password must have no control characters.")
                }
                credentials = SMTPSettings.Credentials(username: username, password: password)
            } else if reader.has("password") {
                throw .invalidRequest("\(path).password needs a username.")
            }
            let timeout = try reader.integer("timeout_seconds", in: Self.timeouts) ?? 30
            return .smtp(
                SMTPSettings(
                    host: host.lowercased(), port: port, security: security, credentials: credentials, greetingName: greetingName,
                    timeout: .seconds(timeout)))
        case "ses":
            try reader.rejectUnknown(allowed: [
                "type", "region", "access_key_id", "secret_access_key", "configuration_set", "endpoint", "timeout_seconds",
            ])
            let region = try reader.token("region", bytes: 6...32, allowed: Self.isRegionByte, what: "an AWS region such as eu-west-1")
            guard Self.isRegion(region) else { throw .invalidRequest("\(path).region must be an AWS region such as eu-west-1.") }
            let keyID = try reader.token(
                "access_key_id", bytes: 16...128, allowed: { (65...90).contains($0) || (48...57).contains($0) },
                what: "an AWS access key id (capital letters and digits)")
            let secret = try reader.secret("secret_access_key", bytes: 16...128)
            guard HeaderText.isPlain(secret) else { throw .invalidRequest("\(path).secret_access_key must have no control characters.") }
            let configurationSet = try reader.has("configuration_set")
                ? reader.token(
                    "configuration_set", bytes: 1...64, allowed: { Self.isNameByte($0) }, what: "letters, digits, - and _")
                : nil
            let endpoint = try reader.httpURL("endpoint") ?? URL(string: "https://email.\(region).amazonaws.com")!
            try Self.check(endpoint, field: "\(path).endpoint", allowsPrivateAddresses: allowsPrivateAddresses)
            return .ses(
                SESSettings(
                    region: region, accessKeyID: keyID, secretAccessKey: secret, configurationSet: configurationSet,
                    endpoint: endpoint, timeout: .seconds(try reader.integer("timeout_seconds", in: Self.timeouts) ?? 30)))
        case "http":
            try reader.rejectUnknown(allowed: ["type", "url", "secret", "timeout_seconds"])
            guard let url = try reader.httpURL("url") else {
                throw .invalidRequest("\(path).url is required: an absolute http(s) URL.")
            }
            try Self.check(url, field: "\(path).url", allowsPrivateAddresses: allowsPrivateAddresses)
            return .http(
                url: url, secret: try reader.secret("secret", bytes: 16...256),
                timeout: .seconds(try reader.integer("timeout_seconds", in: Self.timeouts) ?? 30))
        case "log":
            try reader.rejectUnknown(allowed: ["type"])
            guard environment == .development else {
                throw .invalidRequest("\(path): the log sender is for development apps only.")
            }
            guard allowsLog else { throw .invalidRequest("\(path): the log sender is off on this gateway (production mode).") }
            return .log
        default:
            throw .invalidRequest("\(path).type must be smtp, ses, http or log.")
        }
    }

    /// A 400 for a URL whose host is an ambiguous number, or a private
    /// address where they are off; a name is checked again at each call.
    private static func check(_ url: URL, field: String, allowsPrivateAddresses: Bool) throws(GatewayError) {
        if let refusal = OutboundAddressPolicy.refusal(of: url, field: field) { throw refusal }
        if let host = url.host(percentEncoded: false), let literal = IPAddress(host), !allowsPrivateAddresses,
            !OutboundAddressPolicy.isPublic(literal)
        {
            throw .invalidRequest("\(field): \(host) is not a public address (private addresses are off on this gateway).")
        }
    }

    /// `eu-west-1`, `us-gov-west-1`, `ap-southeast-2`: letters in groups, then a digit.
    private static func isRegion(_ region: String) -> Bool {
        let groups = region.split(separator: "-", omittingEmptySubsequences: false)
        guard groups.count >= 3, let last = groups.last, last.count == 1, last.utf8.allSatisfy({ (48...57).contains($0) })
        else { return false }
        return groups.dropLast().allSatisfy { !$0.isEmpty && $0.utf8.allSatisfy { (97...122).contains($0) } }
    }

    private static func isRegionByte(_ byte: UInt8) -> Bool { (97...122).contains(byte) || (48...57).contains(byte) || byte == 45 }

    private static func isNameByte(_ byte: UInt8) -> Bool {
        (97...122).contains(byte | 0x20) || (48...57).contains(byte) || byte == 45 || byte == 95
    }

    /// Letters, digits, dots and hyphens, at most 253 bytes: a DNS name or a dotted quad.
    private static func isHostName(_ host: String) -> Bool {
        !host.isEmpty && host.utf8.count <= 253
            && host.utf8.allSatisfy { (97...122).contains($0 | 0x20) || (48...57).contains($0) || $0 == 46 || $0 == 45 }
    }
}
