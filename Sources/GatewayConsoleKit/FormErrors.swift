import Foundation
public import GatewayCore

/// Puts the API's refusal beside the form field its message names (the API
/// names the field first: "token_ttl_seconds must be ...",
/// "plugins.webhook.url ..."), or above the form when it names none.
public enum FormErrors {
    /// `["error_<field>": message]`, or `["error": message]`.
    public static func place(_ message: String, fields: [String]) -> [String: Any] {
        for field in fields.sorted(by: { $0.count > $1.count }) {
            let mentioned = message.hasPrefix(field) || message.contains(" \(field)") || message.contains("\(field).")
                || message.contains("'\(field)'")
            if mentioned { return ["error_\(field)": message, "has_errors": true] }
        }
        return ["error": message, "has_errors": true]
    }

    /// A refusal the console makes before calling the API: a value that is
    /// not even the right kind (text where a number goes, JSON that does not parse).
    public static func local(_ field: String, _ message: String) -> [String: Any] {
        ["error_\(field)": message, "has_errors": true]
    }
}

/// JSON for a textarea and back.
public enum JSONText {
    public static func pretty(_ value: JSONValue) -> String {
        String(decoding: JSONCoding.bytes(of: value, indented: true), as: UTF8.self)
    }

    /// The object typed into a textarea; `nil` when it is not one.
    public static func object(_ text: String) -> [String: JSONValue]? {
        guard case .object(let members)? = value(text) else { return nil }
        return members
    }

    /// The JSON value typed into a textarea; `nil` when it is not JSON.
    public static func value(_ text: String) -> JSONValue? {
        try? JSONCoding.value(text)
    }
}
