import Foundation
import GatewayCore

/// An app's options for the phone-code plugin (`plugins.phone_code`), read
/// strictly. Secrets (`sender.secret`, `sender.auth_token`) are write-only:
/// the admin API shows them as ``PhoneCodeOptions/redacted``.
struct PhoneCodeOptions: Sendable {
    static let redacted = "********"

    struct TestNumber: Sendable {
        let code: String
        let expiresAt: Date?
    }

    enum Sender: Sendable {
        case webhook(url: URL, secret: String)
        case twilio(accountSID: String, authToken: String, from: String, message: String, baseURL: URL)
        case log
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

    static let codeLengths = 4...10
    static let lifetimes = 60...900
    static let attempts = 1...10
    static let resendDelays = 10...3600

    init(_ options: JSONValue, environment: AppEnvironment, allowsLogSender: Bool = true) throws(GatewayError) {
        let reader = try OptionsReader(options, path: "plugins.phone_code")
        try reader.rejectUnknown([
            "code_length", "code_ttl_seconds", "max_attempts", "resend_after_seconds", "allowed_prefixes",
            "allow_unbound_numbers", "test_numbers", "sender",
        ])
        codeLength = try reader.integer("code_length", in: Self.codeLengths) ?? codeLength
        lifetimeSeconds = try reader.integer("code_ttl_seconds", in: Self.lifetimes) ?? lifetimeSeconds
        maximumAttempts = try reader.integer("max_attempts", in: Self.attempts) ?? maximumAttempts
        resendAfterSeconds = try reader.integer("resend_after_seconds", in: Self.resendDelays) ?? resendAfterSeconds
        allowUnboundNumbers = try reader.bool("allow_unbound_numbers") ?? false
        for prefix in try reader.strings("allowed_prefixes") ?? [] {
            guard prefix.count >= 2, prefix.count <= 8, prefix.first == "+", prefix.dropFirst().allSatisfy(\.isASCII),
                prefix.dropFirst().allSatisfy(\.isNumber)
            else { throw .invalidRequest("plugins.phone_code.allowed_prefixes: '\(prefix)' is not + and 1 to 7 digits.") }
            allowedPrefixes.append(prefix)
        }
        for (index, entry) in (try reader.objects("test_numbers") ?? []).enumerated() {
            let path = "plugins.phone_code.test_numbers[\(index)]"
            try entry.rejectUnknown(["phone_number", "code", "expires_at"])
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
    }

    private static func sender(
        _ reader: OptionsReader?, environment: AppEnvironment, allowsLog: Bool
    ) throws(GatewayError) -> Sender {
        guard let reader else {
            throw .invalidRequest("plugins.phone_code.sender is required: {\"type\": \"webhook\" | \"twilio\" | \"log\", ...}.")
        }
        switch try reader.string("type") {
        case "webhook":
            try reader.rejectUnknown(["type", "url", "secret"])
            return .webhook(url: try reader.httpURL("url"), secret: try reader.secret("secret"))
        case "twilio":
            try reader.rejectUnknown(["type", "account_sid", "auth_token", "from", "message", "base_url"])
            guard let sid = try reader.string("account_sid"), !sid.isEmpty, sid.utf8.count <= 64 else {
                throw .invalidRequest("plugins.phone_code.sender.account_sid is required.")
            }
            let from = try PhoneNumber.parse(try reader.string("from"), field: "plugins.phone_code.sender.from")
            let message = try reader.string("message") ?? "Your code is {code}"
            guard message.contains("{code}"), message.utf8.count <= 320 else {
                throw .invalidRequest("plugins.phone_code.sender.message must contain {code} and be at most 320 bytes.")
            }
            let baseURL = try reader.has("base_url") ? reader.httpURL("base_url") : URL(string: "https://api.twilio.com")!
            return .twilio(
                accountSID: sid, authToken: try reader.secret("auth_token"), from: from.text, message: message,
                baseURL: baseURL)
        case "log":
            try reader.rejectUnknown(["type"])
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

    /// Whether `number` may receive a code under the allowlist.
    func allows(_ number: PhoneNumber) -> Bool {
        allowedPrefixes.isEmpty || allowedPrefixes.contains { number.text.hasPrefix($0) }
    }

    /// The fixed code of a test number that has not expired.
    func testCode(for number: PhoneNumber, now: Date = Date()) -> String? {
        guard let test = testNumbers[number] else { return nil }
        if let expiresAt = test.expiresAt, expiresAt <= now { return nil }
        return test.code
    }

    /// `options` with the sender's secrets replaced by ``redacted``.
    static func redact(_ options: JSONValue) -> JSONValue {
        guard case .object(var members) = options, case .object(var sender)? = members["sender"] else { return options }
        for key in ["secret", "auth_token"] where sender[key] != nil { sender[key] = .string(redacted) }
        members["sender"] = .object(sender)
        return .object(members)
    }
}

/// Reads one JSON object of options, naming the path in every error.
struct OptionsReader {
    let members: [String: JSONValue]
    let path: String

    init(_ value: JSONValue, path: String) throws(GatewayError) {
        switch value {
        case .null: members = [:]
        case .object(let object): members = object
        default: throw .invalidRequest("\(path) must be an object.")
        }
        self.path = path
    }

    func rejectUnknown(_ allowed: Set<String>) throws(GatewayError) {
        if let unknown = members.keys.sorted().first(where: { !allowed.contains($0) }) {
            throw .invalidRequest("\(path).\(unknown) is not an option of the phone_code plugin.")
        }
    }

    func has(_ key: String) -> Bool { members[key] != nil && members[key] != .null }

    func string(_ key: String) throws(GatewayError) -> String? {
        switch members[key] {
        case nil, .null: return nil
        case .string(let value): return value
        default: throw .invalidRequest("\(path).\(key) must be a string.")
        }
    }

    func bool(_ key: String) throws(GatewayError) -> Bool? {
        switch members[key] {
        case nil, .null: return nil
        case .bool(let value): return value
        default: throw .invalidRequest("\(path).\(key) must be true or false.")
        }
    }

    func integer(_ key: String, in range: ClosedRange<Int>) throws(GatewayError) -> Int? {
        switch members[key] {
        case nil, .null: return nil
        case .number(let value) where range.contains(Int(exactly: value) ?? .min): return Int(value)
        default: throw .invalidRequest("\(path).\(key) must be a whole number from \(range.lowerBound) to \(range.upperBound).")
        }
    }

    func strings(_ key: String) throws(GatewayError) -> [String]? {
        switch members[key] {
        case nil, .null: return nil
        case .array(let values) where values.count <= 100:
            var strings: [String] = []
            for value in values {
                guard let string = value.stringValue else { throw .invalidRequest("\(path).\(key) must be a list of strings.") }
                strings.append(string)
            }
            return strings
        default: throw .invalidRequest("\(path).\(key) must be a list of at most 100 strings.")
        }
    }

    func object(_ key: String) throws(GatewayError) -> OptionsReader? {
        guard let value = members[key], value != .null else { return nil }
        return try OptionsReader(value, path: "\(path).\(key)")
    }

    func objects(_ key: String) throws(GatewayError) -> [OptionsReader]? {
        switch members[key] {
        case nil, .null: return nil
        case .array(let values) where values.count <= 100:
            var readers: [OptionsReader] = []
            for (index, value) in values.enumerated() { readers.append(try OptionsReader(value, path: "\(path).\(key)[\(index)]")) }
            return readers
        default: throw .invalidRequest("\(path).\(key) must be a list of at most 100 objects.")
        }
    }

    func date(_ key: String) throws(GatewayError) -> Date? {
        guard let text = try string(key) else { return nil }
        guard let date = ISO8601DateFormatter().date(from: text) else {
            throw .invalidRequest("\(path).\(key) must be an RFC 3339 time, e.g. 2027-01-31T00:00:00Z.")
        }
        return date
    }

    func httpURL(_ key: String) throws(GatewayError) -> URL {
        guard let text = try string(key), let url = URL(string: text), ["http", "https"].contains(url.scheme?.lowercased() ?? ""),
            url.host?.isEmpty == false, text.utf8.count <= 2048
        else { throw .invalidRequest("\(path).\(key) must be an absolute http(s) URL.") }
        return url
    }

    /// A write-only secret: 16 to 256 characters, never the redaction marker.
    func secret(_ key: String) throws(GatewayError) -> String {
        guard let text = try string(key), text != PhoneCodeOptions.redacted, (16...256).contains(text.utf8.count) else {
            throw .invalidRequest(
                "\(path).\(key) must be the secret itself (16 to 256 characters); the admin API never shows it, so send it again when changing these options.")
        }
        return text
    }
}
