import Foundation
public import GatewayCore
package import Hummingbird
package import HTTPTypes
public import Logging
package import NIOCore
import NIOHTTP1

/// Turns any error into the gateway's JSON error body:
/// `{"error", "message", "status", "request_id"}`, written here alone
/// (``body(of:requestID:more:)``). Unexpected errors are logged in full and
/// answered with a bare 500.
public enum ErrorResponder {
    package static func response(for error: any Error, requestID: String, logger: Logger) -> Response {
        let gatewayError = translate(error, logger: logger)
        let status = status(for: gatewayError.kind)
        var headers: HTTPFields = [.contentType: "application/json; charset=utf-8"]
        if let seconds = gatewayError.retryAfterSeconds { headers[.retryAfter] = String(seconds) }
        if let headered = error as? HeaderedError { headers.replace(with: headered.headers) }
        return Response(status: status, headers: headers, body: .init(byteBuffer: body(of: gatewayError, requestID: requestID)))
    }

    /// The one writer of an error's body: its four members, then what
    /// `more` adds (a second factor's ticket beside its `mfa_required`).
    package static func body(
        of error: GatewayError, requestID: String, more: (inout JSONObjectWriter) -> Void = { _ in }
    ) -> ByteBuffer {
        var body = JSONObjectWriter(reservingCapacity: 256)
        body.add("error", error.code.rawValue)
        body.add("message", error.message)
        body.add("status", Int64(status(for: error.kind).code))
        body.add("request_id", requestID)
        more(&body)
        return ByteBuffer(bytes: body.finish())
    }

    /// The status each kind of failure is answered with.
    package static func status(for kind: GatewayError.Kind) -> HTTPResponse.Status {
        switch kind {
        case .invalidRequest: .badRequest
        case .unauthenticated: .unauthorized
        case .forbidden: .forbidden
        case .notFound: .notFound
        case .methodNotAllowed: .methodNotAllowed
        case .conflict: .conflict
        case .tooLarge: .contentTooLarge
        case .unsupportedMediaType: .unsupportedMediaType
        case .tooManyRequests: .tooManyRequests
        case .internalFailure: .internalServerError
        case .upstreamFailure: .badGateway
        case .unavailable: .serviceUnavailable
        }
    }

    /// The gateway error `error` is answered as (a 413 for an oversized body,
    /// what the database layer says for its own errors, ...).
    public static func translate(_ error: any Error, logger: Logger) -> GatewayError {
        switch error {
        case let error as GatewayError:
            return error
        case let error as HeaderedError:
            return error.error
        case let error as any GatewayErrorConvertible:
            switch error.gatewayAnswer {
            case .answer(let answer, let log):
                if let log { logger.error("\(log.message)", metadata: ["error": "\(log.detail)"]) }
                return answer
            case .sameAs(let cause):
                return translate(cause, logger: logger)
            }
        case is HTTPParserError:
            // The client sent broken HTTP or hung up in the middle of its body: its doing, not ours.
            logger.debug("request cut off or not HTTP", metadata: ["error": "\(error)"])
            return .invalidRequest("The request was cut off or is not valid HTTP.")
        case is NIOTooManyBytesError:
            return GatewayError(.payloadTooLarge, .tooLarge, "The request body exceeds the size limit.")
        case let error as HTTPError:
            switch error.status {
            case .contentTooLarge:
                return GatewayError(.payloadTooLarge, .tooLarge, "The request body exceeds the size limit.")
            case .notFound:
                return GatewayError(.notFound, .notFound, "No such route.")
            default:
                // What the router says of a request it could not take (a bad query, say).
                let isClients = error.status.code < 500
                return GatewayError(
                    isClients ? .invalidRequest : .internalError, isClients ? .invalidRequest : .internalFailure,
                    error.body ?? error.status.reasonPhrase)
            }
        default:
            logger.error("unexpected error", metadata: ["error": "\(String(reflecting: error))"])
            return .internalError
        }
    }
}

extension HTTPFields {
    /// Adds `fields`, each name's in place of any of that name already here.
    package mutating func replace(with fields: HTTPFields) {
        for (index, field) in fields.enumerated() {
            let firstOfItsName = !fields[..<index].contains { $0.name == field.name }
            if firstOfItsName, contains(field.name) { self[fields: field.name] = [] }
            append(field)
        }
    }
}
