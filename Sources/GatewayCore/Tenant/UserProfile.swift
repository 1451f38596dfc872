import Foundation

/// A profile field a token may carry: the one list every directory, admin
/// answer, webhook answer and token reads, each field under its name here.
/// A new field is a case here and a column in each directory's table (a
/// migration per plugin that keeps users); the rest follows the list.
public enum ProfileField: String, CaseIterable, Sendable {
    case firstName = "first_name"
    case lastName = "last_name"
    case displayName = "display_name"
    case avatarURL = "avatar_url"
    case email

    /// How a value is checked.
    enum Rule {
        /// Text of at most 256 bytes as sent.
        case name
        /// An absolute http(s) URL of at most 2048 bytes.
        case url
        /// An address `local@domain` of at most 254 bytes, no spaces or control characters.
        case email
    }

    var rule: Rule {
        switch self {
        case .firstName, .lastName, .displayName: .name
        case .avatarURL: .url
        case .email: .email
        }
    }

    /// The field's name in requests, answers, tables and Layer's token.
    public var name: String { rawValue }

    /// What people call it (the console's forms).
    public var title: String {
        switch self {
        case .firstName: "First name"
        case .lastName: "Last name"
        case .displayName: "Display name"
        case .avatarURL: "Avatar URL"
        case .email: "Email"
        }
    }

    /// The HTML input type of a form's field for it.
    public var inputType: String {
        switch rule {
        case .name: "text"
        case .url: "url"
        case .email: "email"
        }
    }

    /// The most bytes a value may have, as sent (before trimming).
    public var maximumBytes: Int {
        switch rule {
        case .name: 256
        case .url: 2048
        case .email: 254
        }
    }

    /// `text` as it is stored: trimmed, `nil` when absent or empty. The
    /// bound holds for the value as sent, as the API contract states it.
    ///
    /// - Throws: a 400 naming `path` (the field's name by default).
    public func checked(_ text: String?, at path: String? = nil) throws(GatewayError) -> String? {
        let path = path ?? name
        let sent = text ?? ""
        let trimmed = sent.trimmingCharacters(in: .whitespacesAndNewlines)
        switch rule {
        case .name:
            guard sent.utf8.count <= maximumBytes else { throw .invalidRequest("\(path) must be at most \(maximumBytes) bytes.") }
        case .url:
            guard trimmed.isEmpty || sent.utf8.count <= maximumBytes && Self.isWebURL(trimmed) else {
                throw .invalidRequest("\(path) must be an absolute http(s) URL of at most \(maximumBytes) bytes.")
            }
        case .email:
            guard trimmed.isEmpty || sent.utf8.count <= maximumBytes && Self.isEmailAddress(trimmed) else {
                throw .invalidRequest("\(path) must be an email address (name@domain) of at most \(maximumBytes) bytes.")
            }
        }
        return trimmed.isEmpty ? nil : trimmed
    }

    /// One `@` between a non-empty local part and a domain with a dot inside
    /// it; no whitespace, control characters or angle brackets. Whether the
    /// address exists is the directory's business, not the gateway's.
    private static func isEmailAddress(_ text: String) -> Bool {
        let parts = text.split(separator: "@", omittingEmptySubsequences: false)
        guard parts.count == 2, !parts[0].isEmpty, let dot = parts[1].firstIndex(of: "."),
            dot != parts[1].startIndex, parts[1].last != "."
        else { return false }
        return !text.unicodeScalars.contains { $0.properties.isWhitespace || $0.properties.generalCategory == .control || "<>".unicodeScalars.contains($0) }
    }

    private static func isWebURL(_ text: String) -> Bool {
        guard let url = URL(string: text) else { return false }
        return ["http", "https"].contains(url.scheme?.lowercased() ?? "") && url.host?.isEmpty == false
    }
}

/// A user's profile: the fields (``ProfileField``) that become a token's
/// optional claims, each absent or non-empty.
public struct UserProfile: Sendable, Equatable {
    /// The fields' names, in ``ProfileField`` order: what inputs allow and forms show.
    public static let fieldNames = ProfileField.allCases.map(\.name)

    private var values: [ProfileField: String] = [:]
    /// Whether the user proved they receive mail at `email` (a code sent
    /// there came back); nil where nobody knows (an admin typed it). Tokens
    /// that carry an address say it (OIDC `email_verified`).
    public var emailVerified: Bool?

    public init() {}

    /// The profile of `values`, empty ones left out.
    public init(_ values: [ProfileField: String?]) {
        for (field, value) in values { self[field] = value }
    }

    /// The field's value; setting `nil` or an empty text removes it.
    public subscript(field: ProfileField) -> String? {
        get { values[field] }
        set { values[field] = newValue?.isEmpty == false ? newValue : nil }
    }

    /// The fields present, in ``ProfileField`` order.
    public var fields: [(field: ProfileField, value: String)] {
        ProfileField.allCases.compactMap { field in values[field].map { (field, $0) } }
    }
}
