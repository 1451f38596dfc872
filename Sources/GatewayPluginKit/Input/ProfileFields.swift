import Foundation
public import GatewayCore

/// The rules every directory (passwords, phone numbers) applies to the
/// profile fields that become token claims: names at most 256 bytes as sent,
/// then trimmed; `avatar_url` an absolute http(s) URL of at most 2048 bytes;
/// an empty value means absent.
public enum ProfileFields {
    public static let names = ["first_name", "last_name", "display_name"]
    public static let maximumNameBytes = 256
    public static let maximumURLBytes = 2048

    /// A name field, trimmed; `nil` when absent or empty. The bound holds
    /// for the value as sent, before trimming, as the API contract states it.
    public static func name(_ text: String?, field: String) throws(GatewayError) -> String? {
        let trimmed = (text ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
        guard (text ?? "").utf8.count <= maximumNameBytes else {
            throw .invalidRequest("\(field) must be at most \(maximumNameBytes) bytes.")
        }
        return trimmed.isEmpty ? nil : trimmed
    }

    /// `avatar_url`, checked; `nil` when absent or empty.
    public static func avatarURL(_ text: String?, field: String = "avatar_url") throws(GatewayError) -> String? {
        let trimmed = (text ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
        if trimmed.isEmpty { return nil }
        guard (text ?? "").utf8.count <= maximumURLBytes, let url = URL(string: trimmed),
            ["http", "https"].contains(url.scheme?.lowercased() ?? ""), url.host?.isEmpty == false
        else {
            throw .invalidRequest("\(field) must be an absolute http(s) URL of at most \(maximumURLBytes) bytes.")
        }
        return trimmed
    }
}
