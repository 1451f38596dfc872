public import GatewayCore
public import HTTPTypes

/// A ``GatewayError`` with response headers of its own: the methods a path
/// accepts, an authentication challenge, the state of the limits. The
/// domain's error says what went wrong; this adds what HTTP says beside it,
/// and ``ErrorResponder`` answers both.
public struct HeaderedError: Error, Sendable, CustomStringConvertible {
    public let error: GatewayError
    public let headers: HTTPFields

    public init(_ error: GatewayError, headers: HTTPFields) {
        self.error = error
        self.headers = headers
    }

    public var description: String { error.description }
}
