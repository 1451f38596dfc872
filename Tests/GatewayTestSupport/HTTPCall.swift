import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// One HTTP request over a real socket, for tests that drive a running gateway process.
public enum HTTPCall {
    public struct Answer: Sendable {
        public let status: Int
        public let text: String
        /// The `x-request-id` the gateway answered with.
        public let requestID: String?
        /// Every header, by lowercase name.
        public let headers: [String: String]

        public var json: [String: any Sendable] {
            ((try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: any Sendable]) ?? [:]
        }
    }

    /// A call that got no answer, naming the call (URLSession's own errors do not).
    public struct Failure: Error, CustomStringConvertible {
        public let call: String
        public let underlying: any Error
        public var description: String { "\(call): \(underlying)" }
    }

    public static func send(
        _ method: String, _ url: String, token: String? = nil, json: [String: any Sendable]? = nil,
        headers: [String: String] = [:]
    ) async throws -> Answer {
        var request = URLRequest(url: URL(string: url)!)
        request.httpMethod = method
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        if let token { request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization") }
        if let json {
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
            request.httpBody = try JSONSerialization.data(withJSONObject: json)
        }
        let (data, response): (Data, URLResponse)
        do {
            (data, response) = try await URLSession.shared.data(for: request)
        } catch {
            throw Failure(call: "\(method) \(url)", underlying: error)
        }
        let http = response as? HTTPURLResponse
        return Answer(
            status: http?.statusCode ?? 0, text: String(decoding: data, as: UTF8.self),
            requestID: http?.value(forHTTPHeaderField: "x-request-id"),
            headers: Dictionary(
                (http?.allHeaderFields ?? [:]).map { ("\($0.key)".lowercased(), "\($0.value)") }, uniquingKeysWith: { first, _ in first }))
    }
}
