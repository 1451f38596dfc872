public import Hummingbird
import Foundation
public import GatewayCore
import HTTPTypes
import Logging

/// Gives every request an id and every response, errors included, the
/// `x-request-id` header (a well-formed incoming id, from a load balancer,
/// is kept), and resolves the client's address under the trusted-proxy rules.
public struct RequestIDMiddleware: RouterMiddleware {
    public typealias Context = GatewayRequestContext

    private let trustedProxies: [CIDR]

    public init(trustedProxies: [CIDR] = []) {
        self.trustedProxies = trustedProxies
    }

    public func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        var context = context
        let requestID = request.headers[.requestID].flatMap(Self.acceptable) ?? Self.generate()
        context.requestID = requestID
        context.clientIP = ClientAddress.resolve(
            peer: context.peerAddress, forwardedFor: request.headers[values: .xForwardedFor],
            trustedProxies: trustedProxies)
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
    static let xForwardedFor = HTTPField.Name("x-forwarded-for")!
}
