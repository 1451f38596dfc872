import Foundation
import GatewayCore
public import Hummingbird

/// Builds the paths the console links to and calls.
public enum ConsolePaths {
    public static let root = "/console"

    /// RFC 3986's unreserved characters, ASCII only.
    private static let unreserved = CharacterSet(
        charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")

    /// A path segment (an app id, a user id, a phone number) escaped for a URL.
    public static func segment(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: unreserved) ?? ""
    }

    /// A query value escaped for a URL.
    public static func escapeQuery(_ text: String) -> String {
        segment(text)
    }

    /// An app's console page, by its bare UUID whichever form the id came in.
    public static func app(_ appID: String) -> String { "\(root)/apps/\(segment(bare(appID)))" }

    public static func adminApp(_ appID: String) -> String { "/admin/v1/apps/\(segment(appID))" }

    /// The app id's UUID, lower case; the text itself when it is not an app id.
    public static func bare(_ appID: String) -> String {
        AppID(appID).map { $0.uuid.uuidString.lowercased() } ?? appID
    }

    /// Where a request without a session goes: sign-in, then back to the
    /// page it asked for (a console path only, so the link cannot send the
    /// operator elsewhere).
    public static func signIn(returningTo request: Request?, notice: String?) -> String {
        var query: [(String, String?)] = [("notice", notice)]
        if let request, let path = request.uri.path.hasPrefix("\(root)/") ? request.uri.description : nil {
            query.append(("next", path))
        }
        return ConsoleVisit.pathAndQuery("\(root)/sign-in", query)
    }
}
