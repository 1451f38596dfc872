public import Hummingbird
import Foundation
import GatewayCore
public import GatewayPluginKit
import HTTPTypes
import Logging

/// Gives every request an id, in its context and its logger's metadata, and
/// every response the `x-request-id` header. A well-formed incoming id (from
/// a load balancer) is kept. The outermost middleware: whatever answers
/// below it, an error included, carries the id.
public struct RequestIDMiddleware: RouterMiddleware {
    public typealias Context = GatewayRequestContext

    public init() {}

    public func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        var context = context
        let requestID = request.headers[.requestID].flatMap(Self.acceptable) ?? Self.generate()
        context.requestID = requestID
        context.logger[metadataKey: "request_id"] = .string(requestID)
        var response = try await next(request, context)
        response.headers[.requestID] = requestID
        return response
    }

    static func generate() -> String {
        UUID.random().lowercasedText
    }

    static func acceptable(_ candidate: String) -> String? {
        guard (1...128).contains(candidate.utf8.count),
            candidate.utf8.allSatisfy({ byte in
                (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                    || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_") || byte == UInt8(ascii: ".")
            })
        else { return nil }
        return candidate
    }
}

extension HTTPField.Name {
    static let requestID = HTTPField.Name("x-request-id")!
    static let xForwardedFor = HTTPField.Name("x-forwarded-for")!
}
