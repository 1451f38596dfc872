import Foundation
public import HTTPTypes
public import HummingbirdTesting
import NIOCore

extension TestClientProtocol {
    /// Calls an admin route with a bearer token (or none) and an optional JSON body.
    public func admin(
        _ method: HTTPRequest.Method, _ path: String, token: String?, json: [String: any Sendable]? = nil
    ) async throws -> TestResponse {
        var headers: HTTPFields = [:]
        if let token { headers[.authorization] = "Bearer \(token)" }
        var body: ByteBuffer?
        if let json {
            headers[.contentType] = "application/json"
            body = ByteBuffer(bytes: try JSONSerialization.data(withJSONObject: json))
        }
        return try await execute(uri: path, method: method, headers: headers, body: body)
    }
}
