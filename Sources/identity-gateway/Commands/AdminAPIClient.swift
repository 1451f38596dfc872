import ArgumentParser
import Foundation
import GatewayCore

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Calls the admin REST API for the `admin` subcommands and prints the answer.
struct AdminAPIClient {
    enum Method: String {
        case get = "GET"
        case post = "POST"
        case delete = "DELETE"
    }

    let baseURL: URL
    let token: String

    /// Sends the request; prints a JSON answer, or throws the API's error message.
    func send(_ method: Method, _ path: String, json: [String: JSONValue]? = nil) async throws {
        guard let url = URL(string: baseURL.absoluteString.trimmingSuffix("/") + path) else {
            throw ValidationError("cannot build a URL for \(path)")
        }
        var request = URLRequest(url: url)
        request.httpMethod = method.rawValue
        request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization")
        if let json {
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
            request.httpBody = Data(JSONCoding.bytes(of: .object(json)))
        }
        let (data, response) = try await URLSession.shared.data(for: request)
        let status = (response as? HTTPURLResponse)?.statusCode ?? 0
        let text = String(decoding: data, as: UTF8.self)
        guard (200..<300).contains(status) else {
            let message = (try? JSONCoding.value(data))?["message"]?.stringValue
            throw ValidationError("the gateway answered \(status): \(message ?? text)")
        }
        say(text.isEmpty ? "done (\(status))" : text)
    }

    /// Escapes an id for one path segment (`layer:///apps/...` has slashes).
    static func escape(_ segment: String) -> String {
        segment.addingPercentEncoding(withAllowedCharacters: .alphanumerics.union(CharacterSet(charactersIn: "-._~"))) ?? segment
    }
}

extension String {
    func trimmingSuffix(_ suffix: String) -> String {
        hasSuffix(suffix) ? String(dropLast(suffix.count)) : self
    }
}
