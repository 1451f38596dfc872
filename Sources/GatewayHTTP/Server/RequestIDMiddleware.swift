public import Hummingbird
import Foundation
import HTTPTypes
import Logging

/// Gives every request an id and every response, errors included, the
/// `x-request-id` header. A well-formed incoming id (from a load balancer) is
/// kept; anything else is replaced.
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
        do {
            var response = try await next(request, context)
            response.headers[.requestID] = requestID
            return response
        } catch {
            var response = ErrorResponder.response(for: error, requestID: requestID, logger: context.logger)
            response.headers[.requestID] = requestID
            return response
        }
    }

    static func generate() -> String {
        UUID().uuidString.lowercased()
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
}
