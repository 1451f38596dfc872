import Foundation
import GatewayCore
import GatewayCourier
import GatewayPluginKit
import GatewayOutbound

/// An app's options for the phone-code plugin (`plugins.phone_code`), read
/// strictly. Secrets (`sender.secret`, `sender.auth_token`) are write-only:
/// the admin API shows them as ``RedactedSecret/marker``.
struct PhoneCodeOptions: Sendable {
    struct TestNumber: Sendable {
        let code: String
        let expiresAt: Date?
    }

    enum Sender: Sendable {
        case webhook(url: URL, secret: String)
        case twilio(accountSID: String, authToken: String, from: String, message: String, baseURL: URL)
        case log

        /// `webhook`, `twilio` or `log`, as the options name it.
        var kind: String {
            switch self {
            case .webhook: "webhook"
            case .twilio: "twilio"
            case .log: "log"
            }
        }
    }

    var codeLength = 6
    var lifetimeSeconds = 300
    var maximumAttempts = 5
    var resendAfterSeconds = 60
    /// E.164 prefixes a number must start with; empty allows every country.
    var allowedPrefixes: [String] = []
    /// A number bound to no user signs in as itself (`prn` = the number).
    var allowUnboundNumbers = false
    var testNumbers: [PhoneNumber: TestNumber] = [:]
    var sender: Sender = .log
    /// After this many failed deliveries in a row, the app's sends fail at once for the cool-down.
    var senderBreaker = CircuitBreaker<AppID>.Settings.standard
    /// The human check, the countries codes may go to and the pumping breaker.
    var protection = SendProtection(breaker: SendProtection.Breaker())

    static let codeLengths = 4...10
    static let lifetimes = 60...900
    static let attempts = 1...10
    static let resendDelays = 10...3600
    static let secretBytes = 16...256

    /// The options as declared once (``OptionSchema``); ``init(_:environment:allowsLogSender:)`` adds what a type cannot say.
    static let schema = OptionSchema(
        name: "PhoneCodeOptions", description: "One-time codes by SMS (docs/plugins.md, \"Phone codes\").",
        fields: [
            OptionField("code_length", .integer(codeLengths, default: 6)),
            OptionField("code_ttl_seconds", .integer(lifetimes, default: 300)),
            OptionField("max_attempts", .integer(attempts, default: 5)),
            OptionField("resend_after_seconds", .integer(resendDelays, default: 60)),
            OptionField(
                "allowed_prefixes",
                .list(of: .text(TextRule(pattern: (#"^\+[0-9]{1,7}$"#, meaning: "+ and 1 to 7 digits"))), count: 0...100),
                description: "E.164 prefixes a number must start with; every country when left out."),
            OptionField(
                "allow_unbound_numbers", .boolean(default: false), description: "A number bound to no user signs in as itself."),
            OptionField(
                "test_numbers",
                .list(
                    of: .object([
                        OptionField("phone_number", .text(maximumLength: 16), required: true),
                        OptionField("code", .text(maximumLength: 10), required: true, description: "code_length digits."),
                        OptionField(
                            "expires_at", .text(TextRule(format: .dateTime)), description: "Required for production apps."),
                    ]), count: 0...100)),
            OptionField(
                "sender",
                .variants([
                    OptionVariant(
                        "webhook", description: "The app's own endpoint, each call signed with the secret.",
                        [
                            OptionField("url", .url, required: true, destination: true),
                            OptionField("secret", .secret(secretBytes), required: true),
                        ]),
                    OptionVariant(
                        "twilio", description: "Twilio's Messages API.",
                        [
                            OptionField("account_sid", .text(TextRule(length: 1...64)), required: true),
                            OptionField("auth_token", .secret(secretBytes), required: true),
                            OptionField("from", .text(maximumLength: 16), required: true),
                            OptionField(
                                "message", .text(maximumLength: 320, default: "Your code is {code}"),
                                description: "Must contain {code}."),
                            OptionField(
                                "base_url", .url, operatorOnly: true, destination: true,
                                description: "https://api.twilio.com unless an operator points it elsewhere (a regional edge, a test double)."),
                        ]),
                    OptionVariant("log", description: "Development apps only: the code goes to the gateway's log.", []),
                ]), required: true),
            OptionField("send_protection", .component(SendProtection.schema)),
            CircuitBreaker<AppID>.Settings.option,
        ])

    init(_ options: JSONValue, environment: AppEnvironment, allowsLogSender: Bool = true) throws(GatewayError) {
        let reader = try JSONInput(options, path: "plugins.phone_code")
        try reader.rejectUnknown(allowed: [
            "code_length", "code_ttl_seconds", "max_attempts", "resend_after_seconds", "allowed_prefixes",
            "allow_unbound_numbers", "test_numbers", "sender", "send_protection", "circuit_breaker",
        ])
        codeLength = try reader.integer("code_length", in: Self.codeLengths) ?? codeLength
        lifetimeSeconds = try reader.integer("code_ttl_seconds", in: Self.lifetimes) ?? lifetimeSeconds
        maximumAttempts = try reader.integer("max_attempts", in: Self.attempts) ?? maximumAttempts
        resendAfterSeconds = try reader.integer("resend_after_seconds", in: Self.resendDelays) ?? resendAfterSeconds
        allowUnboundNumbers = try reader.bool("allow_unbound_numbers") ?? false
        for prefix in try reader.strings("allowed_prefixes", maximumCount: 100) ?? [] {
            guard prefix.count >= 2, prefix.count <= 8, prefix.first == "+", prefix.dropFirst().allSatisfy(\.isASCII),
                prefix.dropFirst().allSatisfy(\.isNumber)
            else { throw .invalidRequest("plugins.phone_code.allowed_prefixes: '\(prefix)' is not + and 1 to 7 digits.") }
            allowedPrefixes.append(prefix)
        }
        for (index, entry) in (try reader.objects("test_numbers", maximumCount: 100) ?? []).enumerated() {
            let path = "plugins.phone_code.test_numbers[\(index)]"
            try entry.rejectUnknown(allowed: ["phone_number", "code", "expires_at"])
            let number = try PhoneNumber.parse(try entry.string("phone_number"), field: "\(path).phone_number")
            guard let code = try entry.string("code"), code.count == codeLength, code.allSatisfy(\.isASCII),
                code.allSatisfy(\.isNumber)
            else { throw .invalidRequest("\(path).code must be \(codeLength) digits.") }
            let expiresAt = try entry.date("expires_at")
            guard environment == .development || expiresAt != nil else {
                throw .invalidRequest("\(path).expires_at is required: a production app may only have expiring test numbers.")
            }
            testNumbers[number] = TestNumber(code: code, expiresAt: expiresAt)
        }
        sender = try Self.sender(try reader.object("sender"), environment: environment, allowsLog: allowsLogSender)
        protection = try SendProtection(try reader.object("send_protection"), path: "plugins.phone_code", sms: true)
        senderBreaker = try CircuitBreaker.Settings(circuitBreakerIn: reader)
    }

    private static func sender(
        _ reader: JSONInput?, environment: AppEnvironment, allowsLog: Bool
    ) throws(GatewayError) -> Sender {
        guard let reader else {
            throw .invalidRequest("plugins.phone_code.sender is required: {\"type\": \"webhook\" | \"twilio\" | \"log\", ...}.")
        }
        switch try reader.string("type") {
        case "webhook":
            try reader.rejectUnknown(allowed: ["type", "url", "secret"])
            guard let url = try reader.httpURL("url") else {
                throw .invalidRequest("plugins.phone_code.sender.url is required: an absolute http(s) URL.")
            }
            if let refusal = OutboundAddressPolicy.refusal(of: url, field: "plugins.phone_code.sender.url") { throw refusal }
            return .webhook(url: url, secret: try reader.secret("secret", bytes: 16...256))
        case "twilio":
            try reader.rejectUnknown(allowed: ["type", "account_sid", "auth_token", "from", "message", "base_url"])
            guard let sid = try reader.string("account_sid"), !sid.isEmpty, sid.utf8.count <= 64 else {
                throw .invalidRequest("plugins.phone_code.sender.account_sid is required.")
            }
            let from = try PhoneNumber.parse(try reader.string("from"), field: "plugins.phone_code.sender.from")
            let message = try reader.string("message") ?? "Your code is {code}"
            guard message.contains("{code}"), message.utf8.count <= 320 else {
                throw .invalidRequest("plugins.phone_code.sender.message must contain {code} and be at most 320 bytes.")
            }
            let baseURL = try reader.httpURL("base_url") ?? URL(string: "https://api.twilio.com")!
            if let refusal = OutboundAddressPolicy.refusal(of: baseURL, field: "plugins.phone_code.sender.base_url") {
                throw refusal
            }
            return .twilio(
                accountSID: sid, authToken: try reader.secret("auth_token", bytes: 16...256), from: from.text, message: message,
                baseURL: baseURL)
        case "log":
            try reader.rejectUnknown(allowed: ["type"])
            guard environment == .development else {
                throw .invalidRequest("plugins.phone_code.sender: the log sender is for development apps only.")
            }
            guard allowsLog else {
                throw .invalidRequest("plugins.phone_code.sender: the log sender is off on this gateway (production mode).")
            }
            return .log
        default:
            throw .invalidRequest("plugins.phone_code.sender.type must be webhook, twilio or log.")
        }
    }

    /// Whether `number` may receive a code under the allowlist and the country policy.
    func allows(_ number: PhoneNumber) -> Bool {
        (allowedPrefixes.isEmpty || allowedPrefixes.contains { number.text.hasPrefix($0) })
            && (protection.countries?.allows(CallingCodes.country(of: number.text)) ?? true)
    }

    /// The fixed code of a test number that has not expired.
    func testCode(for number: PhoneNumber, now: Date = Date()) -> String? {
        guard let test = testNumbers[number] else { return nil }
        if let expiresAt = test.expiresAt, expiresAt <= now { return nil }
        return test.code
    }
}

