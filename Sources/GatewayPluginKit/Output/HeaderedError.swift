public import GatewayCore

/// A ``GatewayError`` with response headers of its own: the methods a path
/// accepts, an authentication challenge, the state of the limits. The
/// domain's error says what went wrong; this adds what HTTP says beside it,
/// and ``ErrorResponder`` answers both.
public struct HeaderedError: Error, Sendable, CustomStringConvertible {
    public let error: GatewayError
    public let headers: [(name: String, value: String)]

    public init(_ error: GatewayError, headers: [(name: String, value: String)]) {
        self.error = error
        self.headers = headers
    }

    public var description: String { error.description }
}
