import Foundation
import GatewayCore

/// Builds the paths the console links to and calls.
enum ConsolePaths {
    static let root = "/console"

    /// RFC 3986's unreserved characters, ASCII only.
    private static let unreserved = CharacterSet(
        charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")

    /// A path segment (an app id, a user id, a phone number) escaped for a URL.
    static func segment(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: unreserved) ?? ""
    }

    /// A query value escaped for a URL.
    static func escapeQuery(_ text: String) -> String {
        segment(text)
    }

    /// An app's console page, by its bare UUID whichever form the id came in.
    static func app(_ appID: String) -> String { "\(root)/apps/\(segment(bare(appID)))" }

    static func adminApp(_ appID: String) -> String { "/admin/v1/apps/\(segment(appID))" }

    /// The app id's UUID, lower case; the text itself when it is not an app id.
    static func bare(_ appID: String) -> String {
        AppID(appID).map { $0.uuid.uuidString.lowercased() } ?? appID
    }
}
